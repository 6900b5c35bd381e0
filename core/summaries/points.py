"""The points of a summary without a model (pure): one per thread of the talk, within a
budget of quoted messages.

Each thread (core/summaries/threads.py) becomes a point in the messages' own words,
listed by the strongest thing one of its lines says by the cue phrases (a decision, an
action item, an open question), else with the rest of the discussion. A bare
acknowledgement ("passt", "love it") is left out of its thread. A summary that quotes
(nearly) the whole room is no summary, so the room's lines are quoted up to
QUOTED_SHARE of them (and MOST_QUOTED in all); past that the lines that carry least are
left out first: never the line that opens a thread or the one that closes it, and the
lines the cue phrases picked (decisions, actions, questions with their answers) last.
What a line carries: its figures, the rare terms it shares with its thread, a
commitment, its length.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from core.summaries.draft import SummaryLine
from core.summaries.salience import PRIORITY, Pick
from core.summaries.threads import Terms
from core.summaries.wording import Said, decide_said

# Of the room's messages, the share a summary quotes at most, and a ceiling in lines.
QUOTED_SHARE = 0.66
MOST_QUOTED = 60
# A line of at most this many words that names nothing of its thread is an acknowledgement.
ACK_WORDS = 3
COMMITMENTS: tuple[Said, ...] = ("decision", "arrangement", "action", "deferral")


def decide_thread_points(
    lines: Sequence[SummaryLine],
    threads: Sequence[tuple[int, ...]],
    terms: Terms,
    cued: Collection[int] = (),
) -> list[Pick]:
    """A point per thread, its acknowledgements left out, within the budget; `cued` are
    the lines the cue phrases picked, kept longest."""
    kept = [_without_acks(lines, thread, terms) for thread in threads]
    kept = [thread for thread in kept if thread]
    budget = min(MOST_QUOTED, int(QUOTED_SHARE * len(lines)))
    while sum(len(thread) for thread in kept) > budget:
        candidates = [
            ((i in cued, _carries(lines, i, thread, terms)), n, i)
            for n, thread in enumerate(kept)
            for i in _removable(thread)
        ]
        _, n, index = min(candidates)
        kept[n] = [i for i in kept[n] if i != index]
    return [_point(lines, thread) for thread in kept if thread]


def _without_acks(lines: Sequence[SummaryLine], thread: Sequence[int], terms: Terms) -> list[int]:
    named = [t for i in thread for t in terms.rare[i]]
    return [
        i
        for i in thread
        if decide_said(lines[i].text)
        or terms.figures[i]
        or len(lines[i].text.split()) > ACK_WORDS
        or any(named.count(t) > 1 for t in terms.rare[i])
    ]


def _removable(thread: Sequence[int]) -> Sequence[int]:
    """The lines of a thread that may go: all of a line alone, the second of two, the
    middle of more (where the thread starts and where it ends up stay)."""
    if len(thread) <= 2:
        return thread[-1:]
    return thread[1:-1]


def _carries(
    lines: Sequence[SummaryLine], index: int, thread: Sequence[int], terms: Terms
) -> float:
    """How much a line says for its thread: its figures, the rare terms it shares with
    the thread's other lines, a commitment, its length."""
    others = frozenset().union(*(terms.rare[i] for i in thread if i != index))
    commits = decide_said(lines[index].text) in COMMITMENTS
    words = min(len(lines[index].text.split()), 20)
    return (
        2 * len(terms.figures[index]) + len(terms.rare[index] & others) + 3 * commits + words / 4
    )


def _point(lines: Sequence[SummaryLine], thread: Sequence[int]) -> Pick:
    """The thread as a point, listed by its strongest line's cue (else with the rest)."""
    said = [(s, i) for i in thread if (s := decide_said(lines[i].text)) is not None]
    if not said:
        return Pick("status", tuple(thread), thread[0])
    strongest, main = min(said, key=lambda item: PRIORITY.index(item[0]))
    return Pick(strongest, tuple(thread), main)
