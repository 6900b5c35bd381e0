"""The threads of a room's talk (pure): which messages speak of the same thing, found from
the conversation's structure and the words it shares, in any language.

A fact of a room is seldom in one message: a question and the line that settles it, a
value and its correction twenty messages later, a hand-over item and the colleague who
takes it. Each message is hung on the one it continues, tried in this order:
1. the message it answers (a Matrix reply, the thread before it, a question just before
   it by someone else, or the line it leans back on: `decide_context`; for a question
   right after someone answered its asker, that answer: "how many calls?" "37" "on how
   many accounts?"; for a bare
   figure, "3", that answers no question just before it, the question it answers up
   to ASKED_LINES back: the latest that names its sender, else the latest that asks
   for a number ("how many…", "ile…", "件数…") no bare figure answered yet, else the
   latest by someone else nobody answered right away; after a question that asks for
   no number ("who takes it?" "1240"), the one that asked for it, if any);
2. the recent message (among the last WINDOW) that shares most of its rare terms (subject
   words said in few messages, and figures: "db-repl-02", "3,100", "KW 52"), each term
   weighed by how rarely the room says it;
3. any earlier message that names the same figure ("MOB-2230" then "2230 закрыт") or two
   of the same rarest words (an update hours later);
4. for a short line or a commitment, the message just before it by someone else ("ok
   hold", "dann 10", "eso lo hago yo la semana q viene"); for a line by someone the
   message just before it named, minutes before, that message ("Chloe needs a full day
   for the run" "it takes a day and a half");
5. the same person's message just before (a thought in two messages).
Besides, a line recalls the earlier lines (two at most) further back than WINDOW whose
rare terms it shares weigh most, when they weigh enough (`decide_recalls`): an update
hours later ("expo-concept hat nachgelegt: 17.900 €") shows the offer it revises,
without joining the two threads. One word said only in the line and the one it recalls
is enough (a coincidence then recalls a line in a few words; asking for two words lost
two facts of the development logs).
A line that answers small talk without being small talk itself answers what that small
talk answered (a line misjudged as chatter between a question and its answer) or, when
it answered nothing, the recent line whose rare terms it shares most; else it is linked
by rules 2-3 only. An answer (1.) also joins the recent message that shares most
of its rare terms: it may take up a subject said a few lines before the question. The
messages hung together are a thread, talk beside the work left out. Nothing here knows
a language's words beyond spaCy's stop words.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from core.summaries.addressing import decide_named
from core.summaries.cues import QUANTITY
from core.summaries.draft import SummaryLine
from core.summaries.exchanges import decide_context
from core.summaries.figures import build_marks, build_values, decide_bare_figure
from core.summaries.sidetracks import build_sender_names, build_subject_words, decide_names
from core.summaries.wording import decide_asks, decide_said
from core.summaries.words import count_words

# Recent messages a line may continue by the words it shares.
WINDOW = 8
# A term is rare when at most this share of the room's messages says it (or 3 of them).
RARE_SHARE = 0.2
RARE_AT_LEAST = 3
# Terms said in at most this many messages link lines however far apart.
RAREST = 3
FAR_WORDS = 2
# Characters a shared figure has, at least, to link lines far apart ("2230", "3.6").
FAR_FIGURE = 3
# A line this short with nothing else to go on answers the one just before it.
SHORT_WORDS = 6
# What a line says that takes on what was said just before it.
COMMITS = ("action", "arrangement")
# Lines of small talk an answer is traced back through, at most, to what they answered.
THROUGH_CHATTER = 3
# The same person's next message within this many seconds goes on with the same thought.
SAME_THOUGHT_SECONDS = 5 * 60
# How far apart, at most (a factor), a bare figure and a number its question names are
# for the figure to take that number up ("800万〜?" "820"; "78?" "dann 78").
SCALE = 1.5
# A date or a time of day ("12/11", "10:30") is no quantity a figure takes up.
DATE_OR_TIME = re.compile(r"\d+(?:[:/]\d+)+")
# Lines back a bare figure may answer a question ("how many?" … ten lines on … "46"; in
# a day's busy room, thirty lines on: `dev7/`).
ASKED_LINES = 40
# What the rare terms a line shares with an earlier line further back must weigh, at
# least, for the line to recall it (a term said in two lines weighs 1/2, in four 1/4);
# terms said in more lines than RECALL_COMMON weigh too little to look up (a long room
# stays linear).
RECALL_WEIGHT = 0.5
RECALL_COMMON = 20
# Earlier lines a line recalls at most, the weightiest first: a coincidence may weigh as
# much as the line an update settles ("listo, lo apagué yo desde el panel … los whatsapp
# los contestamos a mano" shares "panel" with a question on the ticket panel as much as
# "whatsapp" with the bot's wrong dates). On the development logs two kept 4 more facts
# than one (510/559), the held-out totals the same; a third added none.
RECALLS = 2


@dataclass(frozen=True)
class Terms:
    """What each line names: its rare terms, its figures, how many lines say each, and
    how many of the room's people it names."""

    rare: tuple[frozenset[str], ...]
    figures: tuple[frozenset[str], ...]
    counts: Counter[str]
    people: tuple[int, ...] = ()


def build_terms(lines: Sequence[SummaryLine]) -> Terms:
    """The rare terms and figures of every line (the senders' names left out, counted)."""
    names = build_sender_names({line.sender for line in lines})
    found = [build_subject_words(line.text) for line in lines]
    named = [decide_names(said, names) for said in found]
    words = [said - people for said, people in zip(found, named, strict=True)]
    figures = tuple(frozenset(m for m in build_marks(line.text) if len(m) >= 2) for line in lines)
    counts: Counter[str] = Counter(
        t for found, marks in zip(words, figures, strict=True) for t in found | marks
    )
    rare_at = max(RARE_AT_LEAST, RARE_SHARE * len(lines))
    rare = tuple(
        frozenset(w for w in found if counts[w] <= rare_at) | figures[i]
        for i, found in enumerate(words)
    )
    return Terms(rare, figures, counts, tuple(len(people) for people in named))


class Link(NamedTuple):
    """A line (`later`) that continues an `earlier` one."""

    later: int
    earlier: int


def decide_links(
    lines: Sequence[SummaryLine], chatter: frozenset[int], terms: Terms | None = None
) -> tuple[list[int], list[Link]]:
    """The lines that are not `chatter`, and what each continues: the line it goes on
    from (the rules of the module's docstring; none when it starts a thread) and, for
    an answer, the subject it takes up besides."""
    terms = terms or build_terms(lines)
    live = [i for i in range(len(lines)) if i not in chatter]
    links: list[Link] = []
    # The earlier lines that name each term, for the links far back (no scan of the room).
    named: dict[str, list[int]] = {}
    # The questions someone answered right away: a bare figure said later answers another.
    answered: set[int] = set()
    for position, index in enumerate(live):
        recent = live[max(0, position - WINDOW) : position]
        # A line that answers small talk yet is not itself small talk ("2230 закрыт"
        # after a line misjudged as chatter) answers what that small talk answered, or
        # goes on from the work by its words alone.
        context, past, through = decide_context(lines, index), 0, None
        while context is not None and context in chatter and past < THROUGH_CHATTER:
            through = context
            context, past = decide_context(lines, context), past + 1
        if context is None and through is not None:
            # The talk it answers, taken for small talk, went on from no line: it
            # answers the work that talk's words take up ("design moved off mural too"
            # between "mural renews 15 jan" and "I'll let it lapse then").
            start = bisect_left(live, through, hi=position)
            before = live[max(0, start - WINDOW) : start]
            context = _shares(lines, through, before, terms)
        explicit = lines[index].reply_to is not None or lines[index].thread_root is not None
        if (context is None or not explicit) and decide_bare_figure(lines[index].text):
            earlier = live[max(0, position - ASKED_LINES) : position]
            context = _figure_context(lines, index, context, earlier, answered)
        if (
            context is not None
            and lines[context].sender != lines[index].sender
            and decide_asks(lines[context].text)
            and not decide_asks(lines[index].text)
        ):
            answered.add(context)
        if context is None and position and decide_asks(lines[index].text):
            context = _follows_up(lines, index, live[position - 1], links)
        if context is None or context in chatter:
            found = _continues(lines, index, recent, named, terms, by_place=past == 0)
            if found is not None:
                links.append(Link(index, found))
        else:
            links.append(Link(index, context))
            # An answer may also take up a subject said a few lines earlier.
            also = _shares(lines, index, recent, terms)
            if also is not None and also != context:
                links.append(Link(index, also))
        for term in terms.rare[index]:
            named.setdefault(term, []).append(index)
    return live, links


def decide_recalls(lines: Sequence[SummaryLine], live: Sequence[int], terms: Terms) -> list[Link]:
    """For each of the `live` lines, the earlier ones further back than WINDOW (in the
    same thread, or its root) whose rare terms it shares weigh most (RECALLS at most),
    each term 1 / the lines that say it, when they weigh RECALL_WEIGHT at least; the
    nearest of equals first."""
    named: dict[str, list[int]] = {}  # a term → the live lines that named it, in order
    place = {index: position for position, index in enumerate(live)}
    recalls = []
    for position, index in enumerate(live):
        shared: dict[int, list[float]] = {}
        for term in terms.rare[index]:
            said = terms.counts.get(term, 1)
            if said > RECALL_COMMON:
                continue
            for earlier in named.get(term, ()):
                if place[earlier] < position - WINDOW:
                    shared.setdefault(earlier, []).append(1 / max(1, said))
            named.setdefault(term, []).append(index)
        thread = lines[index].thread_root
        # fsum: the same weight whatever order the set gives its terms in (ties break alike).
        weighed = [
            (math.fsum(weights), earlier)
            for earlier, weights in shared.items()
            if thread in (lines[earlier].thread_root, lines[earlier].event_id)
        ]
        for weight, earlier in sorted(weighed, reverse=True)[:RECALLS]:
            if weight >= RECALL_WEIGHT:
                recalls.append(Link(index, earlier))
    return recalls


def decide_threads(
    lines: Sequence[SummaryLine], chatter: frozenset[int], terms: Terms | None = None
) -> list[tuple[int, ...]]:
    """The threads of the lines that are not `chatter` (the lines linked together), each
    in time order, the threads in the order they start."""
    live, links = decide_links(lines, chatter, terms)
    parent = {index: index for index in live}

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    for link in links:
        parent[root(link.later)] = root(link.earlier)
    threads: dict[int, list[int]] = {}
    for index in live:
        threads.setdefault(root(index), []).append(index)
    return sorted((tuple(members) for members in threads.values()), key=lambda t: t[0])


def _figure_context(
    lines: Sequence[SummaryLine],
    index: int,
    context: int | None,
    earlier: Sequence[int],
    answered: Collection[int],
) -> int | None:
    """What a bare figure ("1284") answers: the line it answers by its place
    (`context`), unless that is no question asking for a number and a question
    further back asked for one or named its sender ("1240" after "who takes care of
    it?" answers "how many customers are offline?"); with no `context`, the question
    `_asked` finds."""
    asked = _asked(lines, index, earlier, answered)
    if context is None or asked is None:
        return asked if context is None else context
    context_counts = QUANTITY.search(lines[context].text) and decide_asks(lines[context].text)
    asked_fits = (
        QUANTITY.search(lines[asked].text)
        or _names(lines[asked], lines[index].sender)
        # a number of the figure's scale, unless the line it answers by its place is a
        # question too ("which PR next?" "12" is no answer to "standup at 10:30?")
        or (
            _same_scale(lines[asked].text, lines[index].text)
            and not decide_asks(lines[context].text)
        )
    )
    return asked if asked_fits and not context_counts else context


def _same_scale(question: str, figure: str) -> bool:
    """Whether a question names a number of the bare figure's scale (within SCALE of
    it): "the offer? she asked for 800万 or more" … "820" takes up that number."""
    said = build_values(DATE_OR_TIME.sub(" ", figure))
    named = build_values(DATE_OR_TIME.sub(" ", question))
    return any(1 / SCALE <= value / other <= SCALE for value in said for other in named if other)


def _takes_on(lines: Sequence[SummaryLine], index: int, before: int, terms: Terms) -> bool:
    """Whether a line takes on, as a commitment, what someone said just `before` it,
    within SAME_THOUGHT_SECONDS ("the B2B portal certificate expires on 3 February" "I'll
    do that next week"): a commitment that answers a need names no subject of its own,
    no figure and no term another message of the room says ("I'll write the 3.8
    release notes" starts a subject)."""
    line = lines[index]
    return (
        decide_said(line.text) in COMMITS
        and not decide_asks(line.text)  # "can you update the status page?" asks anew
        and line.ts - lines[before].ts <= SAME_THOUGHT_SECONDS
        and not terms.figures[index]
        and all(terms.counts.get(term, 1) <= 1 for term in terms.rare[index])
    )


def _calls(before: SummaryLine, line: SummaryLine) -> bool:
    """Whether the line just `before` this one, said by someone else within
    SAME_THOUGHT_SECONDS, names this line's sender: by a mention, or by a name that is
    no common word ("will", "max" name nobody: fewer than four letters, or a stop word)."""
    if before.sender == line.sender or line.ts - before.ts > SAME_THOUGHT_SECONDS:
        return False
    if line.sender in before.mentions:
        return True
    localpart = line.sender.split(":")[0].lstrip("@")
    return bool(build_subject_words(localpart)) and _names(before, line.sender)


def _names(question: SummaryLine, sender: str) -> bool:
    return sender in question.mentions or decide_named(question.text, [sender])


def _asked(
    lines: Sequence[SummaryLine], index: int, earlier: Sequence[int], answered: Collection[int]
) -> int | None:
    """For a bare figure ("3", "1284"), the question it answers among the `earlier`
    lines, the talk having gone on in between: the latest by someone else that names
    its sender ("@tomasz how many calls …?"); else the latest that asks for a number
    ("how many seats?", even its sender's own: they looked it up), else one that names
    a number of the figure's scale ("the offer? she asked for 800万" … "820"), that no
    bare figure answered yet; else the latest by someone else nobody `answered` right away. None
    for any other line."""
    line = lines[index]
    if not decide_bare_figure(line.text):
        return None
    asked = [
        i
        for i in earlier
        if lines[i].thread_root == line.thread_root and decide_asks(lines[i].text)
    ]
    others = [i for i in asked if lines[i].sender != line.sender]
    named = [i for i in others if i not in answered and _names(lines[i], line.sender)]
    figures = [j for j in earlier if decide_bare_figure(lines[j].text)]
    figured = {
        i for i in asked if any(j > i and lines[j].sender != lines[i].sender for j in figures)
    }
    counts = [i for i in asked if QUANTITY.search(lines[i].text) and i not in figured]
    scaled = [i for i in asked if _same_scale(lines[i].text, line.text) and i not in figured]
    found = named or counts or scaled or [i for i in others if i not in answered]
    return found[-1] if found else None


def _follows_up(
    lines: Sequence[SummaryLine], index: int, previous: int, links: Sequence[Link]
) -> int | None:
    """The line a question follows up: the one just before it, when that line, said
    minutes before by someone else, answered a question of its asker ("how many calls
    came from outside?" "37" "on how many accounts?"), whatever words the question
    shares with lines before."""
    line, before = lines[index], lines[previous]
    if before.sender == line.sender or line.ts - before.ts > SAME_THOUGHT_SECONDS:
        return None
    for link in reversed(links):  # the previous line's links are the latest made
        if link.later != previous:
            return None
        asked = lines[link.earlier]
        if asked.sender == line.sender and decide_asks(asked.text):
            return previous
    return None


def _shares(
    lines: Sequence[SummaryLine], index: int, recent: Sequence[int], terms: Terms
) -> int | None:
    """The `recent` line that shares most of this line's rare terms, each weighed by
    how rarely the room says it (1 / the lines that say it); the nearest of equals."""
    thread = lines[index].thread_root
    own = terms.rare[index]
    best, best_weight = None, 0.0
    for i in reversed([i for i in recent if lines[i].thread_root == thread]):
        # fsum: the same weight whatever order the set gives its terms in (a plain sum
        # differs in its last digits, and ties then break differently from run to run).
        weight = math.fsum(1 / max(1, terms.counts.get(t, 1)) for t in own & terms.rare[i])
        if weight > best_weight:
            best, best_weight = i, weight
    return best


def _continues(
    lines: Sequence[SummaryLine],
    index: int,
    recent: Sequence[int],
    named: dict[str, list[int]],
    terms: Terms,
    by_place: bool = True,
) -> int | None:
    """The earlier line that `index` goes on from by its words or (`by_place`) its
    place (rules 2 to 5 of the module's docstring), or None when it starts a thread;
    `named`: the earlier lines that name each term."""
    line = lines[index]
    best = _shares(lines, index, recent, terms)
    if best is not None:
        return best
    recent = [i for i in recent if lines[i].thread_root == line.thread_root]
    far = [
        i
        for figure in terms.figures[index]
        if len(figure) >= FAR_FIGURE
        for i in named.get(figure, ())
        if figure in terms.figures[i]
    ]
    rarest = [t for t in terms.rare[index] if terms.counts.get(t, 1) <= RAREST]
    shared = Counter(i for t in rarest for i in named.get(t, ()))
    far += [i for i, count in shared.items() if count >= FAR_WORDS]
    if far or not by_place:
        return max(far, default=None)  # the latest that names it
    others = [i for i in recent if lines[i].sender != line.sender]
    if others and (
        count_words(line.text) <= SHORT_WORDS or _takes_on(lines, index, others[-1], terms)
    ):
        return others[-1]
    if recent and _calls(lines[recent[-1]], line):
        return recent[-1]
    if recent and lines[recent[-1]].sender == line.sender:
        if line.ts - lines[recent[-1]].ts <= SAME_THOUGHT_SECONDS:
            return recent[-1]
    return None
