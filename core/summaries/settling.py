"""Lines that settle what was just asked or proposed (pure): "dann 10" after a debate
about 7 or 10 days, "1.5Gi, go" after "1.5?", "тогда 3.6" after "3.5?".

A room settles a question a few messages after it was asked, often by a short line that
says only the figure it settles on, in any language. Such a line means nothing alone,
and the question means little without it: the settling line joins the points that hold
the exchange it settles, or, when none does, becomes a point with the line it settles.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.summaries.draft import SummaryLine
from core.summaries.exchanges import POINT_LINES, decide_context
from core.summaries.figures import build_marks, build_numbers
from core.summaries.salience import Pick
from core.summaries.sidetracks import decide_sidetrack
from core.summaries.wording import decide_asks, decide_said
from core.summaries.words import count_words

# Words a settling line has at most: it says the figure, not the reasons.
SETTLE_WORDS = 10
# Messages before it a settling line may settle.
SETTLE_WINDOW = 4


def decide_settled(lines: Sequence[SummaryLine], index: int, chatter: frozenset[int]) -> int | None:
    """The line a short line with a figure settles: the nearest of the few before it,
    by someone else and in the same thread, that says a figure it repeats ("1.5?",
    then "1.5Gi, go"), else that asks about a figure ("3.5?", then "тогда 3.6"); None
    when it settles nothing (a question asks, it does not settle)."""
    line = lines[index]
    numbers = build_numbers(line.text)
    if not numbers or count_words(line.text) > SETTLE_WORDS or index in chatter:
        return None
    if decide_asks(line.text):
        return None
    before: list[int] = []
    for i in range(index - 1, max(-1, index - 1 - SETTLE_WINDOW), -1):
        if i in chatter:
            break
        other = lines[i]
        if other.thread_root == line.thread_root and other.sender != line.sender:
            before.append(i)
    repeated = [i for i in before if numbers & build_numbers(lines[i].text)]
    asked = [i for i in before if decide_asks(lines[i].text) and build_numbers(lines[i].text)]
    found = repeated or asked
    return found[0] if found else None


def decide_figures_start(lines: Sequence[SummaryLine], index: int, chatter: frozenset[int]) -> int:
    """Where the talk about a figure started: back from a line, through the few before
    each that say a figure it repeats ("I'd raise the limit to 1Gi", "1Gi is tight, we
    already saw 900. 1.5?")."""
    start = index
    while True:
        numbers = build_marks(lines[start].text)
        earlier = [
            i
            for i in range(max(0, start - SETTLE_WINDOW), start)
            if i not in chatter
            and lines[i].thread_root == lines[start].thread_root
            and numbers & build_marks(lines[i].text)
        ]
        if not earlier or any(i in chatter for i in range(earlier[0], start)):
            return start
        start = earlier[0]


def decide_settling_points(
    lines: Sequence[SummaryLine], picks: Sequence[Pick], chatter: frozenset[int]
) -> list[Pick]:
    """The points with each settling line beside what it settles: added to every point
    that holds a line of the exchange between them (one with room), else a point of the
    settled line and the settling one."""
    out = list(picks)
    for index in range(len(lines)):
        settled = decide_settled(lines, index, chatter)
        if settled is None:
            continue
        start = decide_figures_start(lines, settled, chatter)
        context = decide_context(lines, start)
        if context is not None and context not in chatter:
            start = min(start, context)
        span = set(range(start, index))
        holders = [
            n
            for n, pick in enumerate(out)
            if span & set(pick.lines) and index not in pick.lines and len(pick.lines) < POINT_LINES
        ]
        for n in holders:
            kept = out[n]
            out[n] = Pick(kept.said, tuple(sorted((*kept.lines, index))), kept.main)
        if holders or any(index in pick.lines for pick in out):
            continue
        if not decide_sidetrack(lines, (settled, index)):
            said = decide_said(lines[index].text) or decide_said(lines[settled].text) or "answered"
            out.append(Pick(said, (settled, index), index))
    return out
