"""A summary as the model writes it, and as the room reads it (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict

from core import strings


@dataclass(frozen=True)
class SummaryLine:
    """One message to summarise; `number` is how prompts and drafts refer to it."""

    number: int
    sender: str
    text: str
    ts: float
    link: str
    event_id: str = ""
    mentions: tuple[str, ...] = ()  # the users the message mentions (m.mentions)
    reply_to: str | None = None
    thread_root: str | None = None  # the thread's first message, for a line in a thread


class Point(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    messages: list[int]


class ActionItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    owner: str
    due: str
    messages: list[int]


class SummaryDraft(BaseModel):
    """The structured output of a summary call; `messages` are the numbers of the lines
    each point comes from."""

    model_config = ConfigDict(extra="forbid")
    tldr: str
    decisions: list[Point]
    action_items: list[ActionItem]
    open_questions: list[Point]


def build_messages_block(lines: Sequence[SummaryLine], timezone: str) -> str:
    zone = ZoneInfo(timezone)
    return "\n".join(
        f"[{line.number}] {line.sender} ({datetime.fromtimestamp(line.ts, zone):%a %d %b %H:%M}): "
        f"{line.text}"
        for line in lines
    )


def _links(numbers: Sequence[int], lines: dict[int, SummaryLine]) -> str:
    """Links to the messages a point comes from; numbers of no given line are dropped."""
    found = [lines[n] for n in dict.fromkeys(numbers) if n in lines]
    return " " + ", ".join(f"[{line.number}]({line.link})" for line in found) if found else ""


def _badge(risks: Sequence[str | None], index: int) -> str:
    """The check's badge for a point only part of which its messages say."""
    risk = risks[index] if index < len(risks) else None
    return f" {strings.SUPPORT_BADGES['medium']}" if risk == "medium" else ""


def build_one_line(text: str) -> str:
    """Text on one line, for a bullet: a newline in it (a pasted log, a model's list)
    would end the bullet, and a "1. …" after it start a list of its own."""
    return " ".join(text.split())


def build_summary_markdown(
    draft: SummaryDraft,
    lines: Sequence[SummaryLine],
    heading: str,
    *,
    risks: Sequence[str | None] = (),
    dropped: int = 0,
) -> str:
    """TL;DR, decisions, action items and open questions, each line linked to its
    messages and, once checked, badged by its verdict (`risks`, in that order); an
    empty section says so rather than inventing one."""
    by_number = {line.number: line for line in lines}
    out = [heading, ""]
    if draft.tldr.strip():  # a model's empty TL;DR is left out, not shown as a bare heading
        out += [f"**{strings.SUMMARY_TLDR}** {draft.tldr.strip()}", ""]
    out.append(f"**{strings.SUMMARY_DECISIONS}**")
    n = 0
    for p in draft.decisions:
        out.append(f"- {build_one_line(p.text)}{_links(p.messages, by_number)}{_badge(risks, n)}")
        n += 1
    if not draft.decisions:
        out.append(f"- {strings.SUMMARY_NO_DECISION}")
    out += ["", f"**{strings.SUMMARY_ACTIONS}**"]
    for item in draft.action_items:
        due = strings.SUMMARY_DUE.format(due=item.due) if item.due else ""
        details = ", ".join(part for part in (item.owner, due) if part)
        out.append(
            f"- {build_one_line(item.text)}{f' ({details})' if details else ''}"
            f"{_links(item.messages, by_number)}{_badge(risks, n)}"
        )
        n += 1
    if not draft.action_items:
        out.append(f"- {strings.SUMMARY_NO_ACTION}")
    out += ["", f"**{strings.SUMMARY_QUESTIONS}**"]
    for p in draft.open_questions:
        out.append(f"- {build_one_line(p.text)}{_links(p.messages, by_number)}{_badge(risks, n)}")
        n += 1
    if not draft.open_questions:
        out.append(f"- {strings.SUMMARY_NO_QUESTION}")
    if dropped:
        out += ["", strings.SUMMARY_POINTS_DROPPED.format(count=dropped)]
    return "\n".join(out)
