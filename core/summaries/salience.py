"""What a summary without a model must not leave out: decisions, action items (who does
what, by when), arrangements, deferrals, open questions and states of things, each with
the messages it needs to stand alone (pure).

A line picked alone can mean nothing ("Not yet.", "I'll fix it this afternoon"): a point
carries the message it replies to (a Matrix reply, the thread before it, or the message
just before it that it answers, back to where the exchange started), and a question is
joined with its answer, which then decides where the point goes ("Not yet, I'll ask
Erin" leaves the question open). Talk beside the work stays out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.summaries.cues import OPEN_ANSWER
from core.summaries.draft import SummaryLine
from core.summaries.exchanges import (
    POINT_LINES,
    decide_answers,
    decide_chain,
    decide_earlier_subject,
    decide_leans_back,
)
from core.summaries.figures import decide_bare_figure
from core.summaries.wording import (
    LISTED,
    Kind,
    Said,
    decide_asks,
    decide_chatter,
    decide_kind,
    decide_said,
)
from core.summaries.words import count_words

KINDS: tuple[Kind, ...] = ("decision", "action", "question")
PRIORITY: tuple[Said, ...] = (
    "decision",
    "deferral",
    "arrangement",
    "action",
    "status",
    "question",
    "answered",
)
# A reply this soon after talk beside the work is more of it.
CHATTER_SECONDS = 5 * 60
CHATTER_WORDS = 10


@dataclass(frozen=True)
class Pick:
    """One point of an extractive summary: what it says and its lines (indexes, in
    time order); `main` is the line that says it; `recalled`: those of its lines that
    another point quotes, said before it, which it recalls for what its own go on from."""

    said: Said
    lines: tuple[int, ...]
    main: int
    recalled: frozenset[int] = frozenset()

    @property
    def listed(self) -> Kind | None:
        return LISTED[self.said]


def decide_carried_actions(
    picks: Sequence[Pick], lines: Sequence[SummaryLine]
) -> list[tuple[int, ...]]:
    """For each pick, the action items it carries when it is listed as a decision: its
    own lines after the decision that say one by their wording ("Decided then. Who writes
    the plan?" "I'll draft it by Friday"), each said once (a line said again, or said as
    another pick's main line, goes once). The summary lists them under the action items
    and the ledger keeps them; decide_kind reads without remembering the words."""
    said = {lines[pick.main].text.strip().lower() for pick in picks}
    out: list[tuple[int, ...]] = []
    for pick in picks:
        carried = []
        if pick.listed == "decision":
            for i in pick.lines:
                key = lines[i].text.strip().lower()
                if i <= pick.main or i in pick.recalled or key in said:
                    continue
                if decide_kind(lines[i].text) == "action":
                    said.add(key)
                    carried.append(i)
        out.append(tuple(carried))
    return out


def decide_chatter_lines(lines: Sequence[SummaryLine]) -> frozenset[int]:
    """The lines of talk beside the work: those that say so by their words, the quick
    short reply right after one ("me!"), and the quick short questions that go on from
    those ("wasn't it a surprise?"), unless they state a decision, an action, an
    arrangement or a deferral. A statement after the first reply is judged by its own
    words: the talk has as often gone back to the work."""
    said = {index for index, line in enumerate(lines) if decide_chatter(line.text)}
    found = set(said)
    for index, line in enumerate(lines):
        if index in said or index - 1 not in found:
            continue
        if (
            (index - 1 in said or decide_asks(line.text))
            and line.ts - lines[index - 1].ts <= CHATTER_SECONDS
            and count_words(line.text) <= CHATTER_WORDS
            and decide_said(line.text) in (None, "question")
            and not decide_bare_figure(line.text)
        ):
            found.add(index)
    return frozenset(found)


def decide_points(lines: Sequence[SummaryLine], limit: int) -> list[Pick]:
    """Up to `limit` points: decisions first, then deferrals, arrangements, action
    items, open questions and answered questions, each in time order. A line said again
    counts once; points that share a line become one."""
    seen: set[str] = set()
    picks: list[Pick] = []
    chatter = decide_chatter_lines(lines)
    for index, line in enumerate(lines):
        said = decide_said(line.text)
        key = line.text.strip().lower()
        if said is None or key in seen or index in chatter:
            continue
        seen.add(key)
        pick = _pick(lines, index, said)
        own = tuple(i for i in pick.lines if i not in chatter)
        if pick.main in own:
            picks.append(Pick(pick.said, own, pick.main))
    merged = _merge(picks)
    merged.sort(key=lambda pick: (PRIORITY.index(pick.said), pick.lines[0]))
    return merged[:limit]


def _pick(lines: Sequence[SummaryLine], index: int, said: Said) -> Pick:
    if said == "question":
        answers = decide_answers(lines, index)
        asked = decide_chain(lines, index) if decide_leans_back(lines, index) else (index,)
        if not answers:
            return Pick("question", asked, index)
        joined = tuple(sorted({*asked, *answers}))
        if any(OPEN_ANSWER.search(lines[i].text) for i in answers):
            return Pick("question", joined, index)
        found = [(decide_said(lines[i].text), i) for i in answers]
        strongest = min(
            ((s, i) for s, i in found if s not in (None, "question")),
            key=lambda item: PRIORITY.index(item[0]),
            default=None,
        )
        if strongest is None:
            return Pick("answered", joined, answers[0])
        return Pick(strongest[0], joined, strongest[1])
    chain = decide_chain(lines, index)
    if len(chain) == 1 and said in ("status", "decision"):
        earlier = decide_earlier_subject(lines, index)
        chain = (index,) if earlier is None else (*decide_chain(lines, earlier), index)
    if len(chain) == 1:
        return Pick(said, chain, index)
    before = chain[-2]
    if decide_asks(lines[before].text) and OPEN_ANSWER.search(lines[index].text):
        return Pick("question", chain, before)
    return Pick(said, chain, index)


def _merge(picks: list[Pick]) -> list[Pick]:
    """Points that share a line become one, saying the stronger thing; when that would
    be too long, the weaker keeps only its own lines (none left: it is said already)."""
    out: list[Pick] = []
    for candidate in sorted(picks, key=lambda p: PRIORITY.index(p.said)):
        pick: Pick | None = candidate
        for i, kept in enumerate(out):
            assert pick is not None
            shared = set(kept.lines) & set(pick.lines)
            if not shared:
                continue
            joined = tuple(sorted(set(kept.lines) | set(pick.lines)))
            if len(joined) <= POINT_LINES:
                out[i] = Pick(kept.said, joined, kept.main)
                pick = None
                break
            own = tuple(line for line in pick.lines if line not in shared)
            if pick.main not in own:
                pick = None
                break
            pick = Pick(pick.said, own, pick.main)
        if pick is not None:
            out.append(pick)
    return out
