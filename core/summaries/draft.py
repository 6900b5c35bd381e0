"""A summary as the model writes it, and as the room reads it (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict

from core import strings
from core.summaries.salience import Kind


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


def build_summary_markdown(draft: SummaryDraft, lines: Sequence[SummaryLine], heading: str) -> str:
    """TL;DR, decisions, action items and open questions, each line linked to its
    messages; an empty section says so rather than inventing one."""
    by_number = {line.number: line for line in lines}
    out = [heading, "", f"**{strings.SUMMARY_TLDR}** {draft.tldr.strip()}", ""]
    out.append(f"**{strings.SUMMARY_DECISIONS}**")
    out += [f"- {p.text}{_links(p.messages, by_number)}" for p in draft.decisions] or [
        f"- {strings.SUMMARY_NO_DECISION}"
    ]
    out += ["", f"**{strings.SUMMARY_ACTIONS}**"]
    for item in draft.action_items:
        due = strings.SUMMARY_DUE.format(due=item.due) if item.due else ""
        details = ", ".join(part for part in (item.owner, due) if part)
        out.append(f"- {item.text}{f' ({details})' if details else ''}"
                   f"{_links(item.messages, by_number)}")  # fmt: skip
    if not draft.action_items:
        out.append(f"- {strings.SUMMARY_NO_ACTION}")
    out += ["", f"**{strings.SUMMARY_QUESTIONS}**"]
    out += [f"- {p.text}{_links(p.messages, by_number)}" for p in draft.open_questions] or [
        f"- {strings.SUMMARY_NO_QUESTION}"
    ]
    return "\n".join(out)


def build_extractive_markdown(
    groups: Mapping[Kind, Sequence[SummaryLine]], others: Sequence[SummaryLine], heading: str
) -> str:
    """Messages quoted as they were, each with its link: decisions, action items and
    open questions under their headings, then the other representative messages, each
    part in time order."""
    titles: dict[Kind, str] = {
        "decision": strings.SUMMARY_DECISIONS,
        "action": strings.SUMMARY_ACTIONS,
        "question": strings.SUMMARY_QUESTIONS,
    }
    out = [heading, "", strings.SUMMARY_EXTRACTIVE]
    parts: list[tuple[str, Sequence[SummaryLine]]] = [
        (titles[kind], groups.get(kind, ())) for kind in titles
    ]
    parts.append((strings.SUMMARY_ALSO_DISCUSSED, others))
    for title, picked in parts:
        if picked:
            out += ["", f"**{title}**"]
            out += [
                f"- {line.sender}: {line.text} ([{strings.MESSAGE_LINK}]({line.link}))"
                for line in sorted(picked, key=lambda line: line.ts)
            ]
    return "\n".join(out)
