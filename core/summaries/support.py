"""A model's summary checked against the messages it cites (pure, but for the call).

A summary is read instead of the room, so a point the messages do not say is worse than
a point left out: a point that cites no message of the summary is dropped before any
check; the model then judges each point against its cited messages, as answers are
judged against their sources. A point the messages do not say ("high") is dropped and
counted, one they say only in part ("medium") keeps the answers' badge; a failed check
leaves the points as they are, unmarked (like an answer whose check failed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.summaries.draft import ActionItem, Point, SummaryDraft, SummaryLine

Risk = Literal["low", "medium", "high"]
SECTIONS = ("decisions", "action_items", "open_questions")  # the order points are numbered
SECTIONS = ("decisions", "action_items", "open_questions")  # the order points are numbered


class PointVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    point: int
    risk: Risk


class SummaryVerdicts(BaseModel):
    """The structured output of a summary's support check."""

    model_config = ConfigDict(extra="forbid")
    points: list[PointVerdict]


@dataclass(frozen=True)
class CheckedDraft:
    draft: SummaryDraft
    # Per kept point, in the order of `build_points_block`: its verdict, when checked.
    risks: tuple[Risk | None, ...] = ()
    dropped: int = 0  # points left out: they cite nothing, or their messages do not say them


def points_of(draft: SummaryDraft) -> list[Point | ActionItem]:
    """Decisions, action items and open questions, in the order they are numbered."""
    return [*draft.decisions, *draft.action_items, *draft.open_questions]


def decide_cited(draft: SummaryDraft, numbers: frozenset[int]) -> CheckedDraft:
    """The draft without the points that cite none of the summary's messages."""

    def cites(point: Point | ActionItem) -> bool:
        return any(n in numbers for n in point.messages)

    kept = draft.model_copy(
        update={
            "decisions": [p for p in draft.decisions if cites(p)],
            "action_items": [a for a in draft.action_items if cites(a)],
            "open_questions": [p for p in draft.open_questions if cites(p)],
        }
    )
    return CheckedDraft(kept, dropped=len(points_of(draft)) - len(points_of(kept)))


def build_points_block(draft: SummaryDraft, lines: Sequence[SummaryLine]) -> str:
    """Each point, numbered from 1, followed by the messages it cites."""
    by_number = {line.number: line for line in lines}
    out = []
    for index, point in enumerate(points_of(draft), start=1):
        text = point.text
        if isinstance(point, ActionItem):
            text += "".join(f" ({part})" for part in (point.owner, point.due) if part)
        out.append(f"Point {index}: {text}")
        out += [
            f"  [{n}] {by_number[n].sender}: {by_number[n].text}"
            for n in dict.fromkeys(point.messages)
            if n in by_number
        ]
    return "\n".join(out)


def decide_supported(checked: CheckedDraft, verdicts: Mapping[int, Risk]) -> CheckedDraft:
    """The draft without the points judged "high" (numbered as in the block); the others
    keep their verdict for a badge. A point without a verdict stays, unmarked."""
    draft = checked.draft
    kept_risks: list[Risk | None] = []
    numbered = iter(range(1, len(points_of(draft)) + 1))

    def judged(points: Sequence[Point | ActionItem]) -> list[Point | ActionItem]:
        kept = []
        for point in points:
            risk = verdicts.get(next(numbered))
            if risk != "high":
                kept.append(point)
                kept_risks.append(risk)
        return kept

    kept = draft.model_copy(update={name: judged(getattr(draft, name)) for name in SECTIONS})
    dropped = checked.dropped + len(points_of(draft)) - len(points_of(kept))
    return CheckedDraft(kept, tuple(kept_risks), dropped)
