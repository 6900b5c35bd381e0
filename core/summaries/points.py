"""The points of a summary without a model (pure): the threads of the talk, within a
budget of quoted messages.

The cue phrases' points (a decision with what it answers, a question with its answer…)
and every other message that is not small talk join along the links of
core/summaries/threads.py, in the order they were said, into points of at most
POINT_LINES messages (a full point hands its latest line to a lone line that goes on
from it: the talk has moved on there); a message two picks share is quoted once. A
point is listed by the strongest thing a pick among it, or one of its other lines by
its wording, says (so an action item linked to a decision is listed with the decision;
the ledger lists each);
else with the rest of the discussion. A bare acknowledgement ("passt", "love it") is
left out, but not the short answer to someone's question ("who calls them?" "moi") nor
a volunteer's reply to a request for someone ("can someone own that" "mine"); so
is a point whose every line the small-talk model leans to (core/summaries/smalltalk.py:
DOUBTFUL), unless a cue phrase's decision or action item is among its lines.
A summary that quotes (nearly) the whole room is no summary: at most
QUOTED_SHARE of the room's lines are quoted (MOST_QUOTED in all, FEWEST_QUOTED whatever
the room). Past that, the lines that carry least go first (their figures, the rare terms
they share with their point, a commitment, their length, a cue phrase's pick; where a
point starts and where it ends up weigh more, and a line the small-talk model leans to
weighs less, wherever it stands); the line that states a decision or an action item
never (the budget may then be passed). Last, a point whose lines go on from a line
quoted in an earlier point recalls that line first: "ok then we ship Thursday 12th"
with the "original plan was Tuesday 10 March" it changes; so does a point with a line
its lines recall from further back (threads.decide_recalls: an offer revised hours
later), or with the line its speaker said just before one of its lines (a thought in two
messages). A recalled line is quoted whole in its own point and shortened where it is
recalled (core/summaries/extractive.py).
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Mapping, Sequence

from core.summaries.cues import OPEN_ANSWER, SOMEONE
from core.summaries.draft import SummaryLine
from core.summaries.figures import build_marks, decide_bare_figure
from core.summaries.salience import PRIORITY, Pick
from core.summaries.threads import SAME_THOUGHT_SECONDS, Link, Terms
from core.summaries.volunteers import decide_volunteers
from core.summaries.wording import Said, decide_any_question, decide_asks, decide_said
from core.summaries.words import count_words

# Of the room's messages, the share a summary quotes at most, and a ceiling in lines
# (a day's busy room of 120-140 messages, `dev7/`, keeps 27 of its 31 key facts with
# 80 lines and 23 with 60); a room of a few messages may be quoted whole.
QUOTED_SHARE = 0.66
MOST_QUOTED = 80
FEWEST_QUOTED = 6
# A line of at most this many words that names nothing of its thread is an acknowledgement.
ACK_WORDS = 3
# Lines a point holds at most when points that go on from each other join.
POINT_LINES = 8
# What a line a cue phrase picked carries besides its words (as much as a commitment): a
# cue is one signal among several, and a picked "ok, on my way" goes before an unpicked
# "the fix ships Thursday in 4.18.2".
CUED = 3
# What the first and the last line of a point carry besides their words (where the talk
# starts and where it ends up, as much as a cue), and what a line the small-talk model
# judged certain small talk carries less (its chance times this; a chatter line that
# opens a point, or the joke it ends on, goes before the point's work).
ENDS = 3
SMALLTALK_COST = 15
# Lines before a recalled line that what it goes on from may stand, to be recalled too
# (a point shows the exchange it goes on from, not one line of it; a recalled line is
# shortened, so this costs a few words).
CONTEXT_LINES = 3
# Lines back a point looks for what its speaker said just before, to recall it: a
# thought in two messages ("found it: <log of AP-6B-03>" "nice catch" "rolled that AP
# back to 17.6") within threads.SAME_THOUGHT_SECONDS.
SAME_THOUGHT_LINES = 3
COMMITMENTS: tuple[Said, ...] = ("decision", "arrangement", "action", "deferral")


def decide_thread_points(
    lines: Sequence[SummaryLine],
    picks: Sequence[Pick],
    live: Sequence[int],
    links: Sequence[Link],
    terms: Terms,
    doubtful: Collection[int] = frozenset(),
    chances: Mapping[int, float] | None = None,
    recalls: Sequence[Link] = (),
) -> list[Pick]:
    """The cue phrases' points (`picks`) and the `live` lines (not small talk), joined
    along their links in the order they were said, into points of at most POINT_LINES lines;
    acknowledgements and points of `doubtful` lines alone (maybe small talk) left out;
    within the budget, the lines the small-talk model leans to (`chances`: line → its
    chance of being small talk, for the lines it judged) going first; each point with
    the quoted lines said before it that its lines go on from or recall (`recalls`)."""
    chances = chances or {}
    # A line the model did not judge (a short one, one before the latest it judges)
    # weighs as the room's middle line does: neither chatter nor work by its chance.
    judged = sorted(chances.values())
    unjudged = judged[len(judged) // 2] if judged else 0.0
    alive = set(live)
    owner: dict[int, int] = {}
    members: list[set[int]] = []
    # A line two picks share is quoted once: with the pick that holds the line said
    # nearest before it (an answer stays with its question), else in the first.
    nearest: dict[int, int] = {}
    for n, pick in enumerate(picks):
        held = sorted(i for i in pick.lines if i in alive)
        for before, index in zip([-1, *held[:-1]], held, strict=True):
            if index not in owner or before > nearest[index]:
                owner[index], nearest[index] = n, before
    members.extend({i for i, n in owner.items() if n == k} for k in range(len(picks)))
    for index in live:
        if index not in owner:
            owner[index] = len(members)
            members.append({index})
    # A short answer to someone else's question ("how many seats?" … "3"; "who calls
    # the references?" "moi") is the answer, no acknowledgement, and it weighs like a
    # cue phrase's pick and a commitment: a question means little without it.
    to_questions = [
        link
        for link in links
        if decide_any_question(lines[link.earlier].text)
        and lines[link.earlier].sender != lines[link.later].sender
    ]
    pairs = [
        link
        for link in to_questions
        if count_words(lines[link.later].text) <= ACK_WORDS
        and not decide_asks(lines[link.later].text)
    ]
    # A volunteer's reply to a request for someone ("can someone own that" "mine";
    # "alguien tiene que armar la macro" "yo") answers it too.
    pairs += [
        link
        for link in links
        if lines[link.earlier].sender != lines[link.later].sender
        and SOMEONE.search(lines[link.earlier].text)
        and decide_volunteers(lines[link.later].text)
    ]
    answers = {link.later for link in pairs}
    asked: dict[int, set[int]] = {}  # a short answer → the questions it answers
    for link in pairs:
        asked.setdefault(link.later, set()).add(link.earlier)
    picked = {index for pick in picks for index in pick.lines}
    cued = picked | answers
    for link in links:  # in time order: a point grows as its talk went on
        mine, theirs = owner[link.later], owner[link.earlier]
        if mine == theirs:
            continue
        if len(members[mine] | members[theirs]) > POINT_LINES:
            # A full point hands its latest line (not a cue phrase's) to a line alone
            # that goes on from it: the talk has moved on to a new point.
            if len(members[mine]) == 1 and link.earlier == max(members[theirs]) not in cued:
                members[theirs].remove(link.earlier)
                members[mine].add(link.earlier)
                owner[link.earlier] = mine
            continue
        members[theirs] |= members[mine]
        for moved in members[mine]:
            owner[moved] = theirs
        members[mine] = set()
    # A decision or an action item is never trimmed away (the budget may then be passed).
    mains = {pick.main for pick in picks if pick.listed in ("decision", "action")}
    # A short question someone else goes on from ("owen?" "mine"; "how much now?" "71%")
    # asks what its answer means: no acknowledgement.
    questions = {link.earlier for link in to_questions}
    kept = [_without_acks(lines, sorted(group), terms, cued | questions) for group in members]
    # Lines the small-talk model leans to, which no other line goes on from: a joke or
    # a question about the car park the model was not sure of (a decision stays).
    unsure = set(doubtful)
    kept = [g for g in kept if set(g) & mains or not set(g) <= unsure]
    budget = min(MOST_QUOTED, max(FEWEST_QUOTED, int(QUOTED_SHARE * len(lines))))
    quoted = sum(len(group) for group in kept)
    # The line that carries least goes first; a point's lines are weighed again when
    # one of them goes (a heap, each point's entries dated by its version).
    version = [0] * len(kept)
    heap: list[tuple[float, int, int, int]] = []

    def weigh(n: int) -> None:
        point = kept[n]
        standing = set(point)
        for i in point:
            if i in mains:
                continue
            # A short answer weighs like a commitment while its question stands in the
            # point: "3" alone, its question trimmed, says nothing.
            paired = i in answers and bool(asked[i] & standing)
            carries = (
                _carries(lines, i, point, terms, paired)
                + CUED * (i in picked or paired)
                + ENDS * _holds(point, i)
                - SMALLTALK_COST * chances.get(i, unjudged)
            )
            heapq.heappush(heap, (carries, n, i, version[n]))

    for n in range(len(kept)):
        weigh(n)
    while quoted > budget and heap:
        *_, n, index, seen = heapq.heappop(heap)
        if seen != version[n]:
            continue
        kept[n].remove(index)
        quoted -= 1
        version[n] += 1
        weigh(n)
    replies: dict[int, set[int]] = {}  # a line → the lines that go on from it
    for link in links:
        replies.setdefault(link.earlier, set()).add(link.later)
    return _with_context(
        [_point(lines, group, picks, replies) for group in kept if group], lines, links, recalls
    )


def _with_context(
    points: Sequence[Pick],
    lines: Sequence[SummaryLine],
    links: Sequence[Link],
    recalls: Sequence[Link] = (),
) -> list[Pick]:
    """Each point with the quoted lines, said before it starts, that its lines go on
    from in another point (a point full at POINT_LINES, or two points a budget cut
    apart), recall (an offer revised hours later) or that their speaker said just
    before them (`_said_before`: a thought in two messages), and the quoted lines those go on
    from up to CONTEXT_LINES before them, marked `recalled`: a bullet shows what it goes
    on from, and the room's quoted lines stay the same. (They are quoted whole in their
    own point, so a bullet recalls them in a few words.)"""
    quoted = {i for point in points for i in point.lines}
    goes_on: dict[int, list[int]] = {}  # a line → the quoted lines it goes on from
    for link in [*links, *recalls]:
        if link.later in quoted and link.earlier in quoted:
            goes_on.setdefault(link.later, []).append(link.earlier)
    for later in quoted:
        earlier = _said_before(lines, later)
        if earlier in quoted:
            goes_on.setdefault(later, []).append(earlier)
    out = []
    for point in points:
        own = set(point.lines)
        start = point.lines[0]
        before = {i for line in own for i in goes_on.get(line, ()) if i < start}
        # and what those go on from just before them: "2230 closed" recalls "2230 still
        # fails, is the fix on staging?" and the "2211 confirmed" it follows.
        before |= {
            i for line in before for i in goes_on.get(line, ()) if line - CONTEXT_LINES <= i < start
        }
        out.append(Pick(point.said, tuple(sorted(own | before)), point.main, frozenset(before)))
    return out


def _said_before(lines: Sequence[SummaryLine], index: int) -> int | None:
    """The line its speaker said just before a line (SAME_THOUGHT_LINES back at most,
    within SAME_THOUGHT_SECONDS), if any."""
    for earlier in range(index - 1, max(-1, index - 1 - SAME_THOUGHT_LINES), -1):
        if lines[earlier].sender == lines[index].sender:
            close = lines[index].ts - lines[earlier].ts <= SAME_THOUGHT_SECONDS
            return earlier if close else None
    return None


def _without_acks(
    lines: Sequence[SummaryLine], thread: Sequence[int], terms: Terms, cued: Collection[int]
) -> list[int]:
    named = [t for i in thread for t in terms.rare[i]]
    return [
        i
        for i in thread
        if i in cued
        or decide_said(lines[i].text)
        or terms.figures[i]
        or count_words(lines[i].text) > ACK_WORDS
        or any(named.count(t) > 1 for t in terms.rare[i])
    ]


def _holds(thread: Sequence[int], index: int) -> bool:
    """Whether a line holds its thread together: where a thread of two or more starts,
    and where one of three or more ends up (the second of two is its answer, which
    weighs by what it says)."""
    if len(thread) < 2:
        return False
    return index == thread[0] or (len(thread) > 2 and index == thread[-1])


def _carries(
    lines: Sequence[SummaryLine], index: int, thread: Sequence[int], terms: Terms, answers: bool
) -> float:
    """How much a line says for its thread: its figures, the rare terms it shares with
    the thread's other lines, a commitment or a bare figure, being the short answer to
    a question (`answers`: as much again), its length."""
    others = frozenset().union(*(terms.rare[i] for i in thread if i != index))
    text = lines[index].text
    commits = decide_bare_figure(text) or decide_said(text) in COMMITMENTS
    words = min(count_words(text), 20)
    return (
        2 * len(terms.figures[index])
        + len(terms.rare[index] & others)
        + 3 * commits
        + 3 * answers
        + words / 4
    )


def _point(
    lines: Sequence[SummaryLine],
    group: Sequence[int],
    picks: Sequence[Pick],
    replies: Mapping[int, Collection[int]],
) -> Pick:
    """The lines as a point, listed by the strongest thing a cue pick among them, or one
    of their other lines by its wording, says (else with the rest of the discussion): a
    question a pick found answered, or that a line of the point answers (`replies`: a
    line → the lines that go on from it), is not an open one."""
    said = [(pick.said, pick.main) for pick in picks if pick.main in group]
    covered = {i for pick in picks if pick.main in group for i in pick.lines}
    said += [
        (s, i) for i in group if i not in covered and (s := decide_said(lines[i].text)) is not None
    ]
    if not said:
        return Pick("status", tuple(group), group[0])
    strongest, main = min(said, key=lambda item: (PRIORITY.index(item[0]), item[1]))
    if strongest == "question" and all(
        _answered(lines, group, i, replies.get(i, ())) for s, i in said if s == "question"
    ):
        # "roll back or raise the limit?" … "1.5Gi, go": someone took it up in the point.
        return Pick("answered", tuple(group), main)
    return Pick(strongest, tuple(group), main)


def _answered(
    lines: Sequence[SummaryLine], group: Collection[int], index: int, replies: Collection[int]
) -> bool:
    """Whether someone other than its asker answered a question in its point: a line
    that goes on from it (`replies`) with a figure or a commitment, asking nothing back
    and not leaving it open ("not sure, last time it was support"; "не знаю" says no
    figure and commits to nothing)."""
    return any(
        i in group
        and lines[i].sender != lines[index].sender
        and (build_marks(lines[i].text) or decide_said(lines[i].text) in COMMITMENTS)
        and not decide_asks(lines[i].text)
        and not OPEN_ANSWER.search(lines[i].text)
        for i in replies
    )
