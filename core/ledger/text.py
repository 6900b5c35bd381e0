"""The ledger as a room reads it (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo

from core import strings
from core.i18n.dates import format_when
from core.summaries.draft import build_one_line
from core.summaries.ledger_entries import LedgerEntry

MAX_LISTED = 25


# What a `!decisions` or `!actions` asked for besides the room's entries: only open
# ones, only the asker's, or those holding some words.
Asked = Literal["", "open", "mine", "words"]


def build_entry_details(entry: LedgerEntry, zone: ZoneInfo) -> list[str]:
    """Who and by when: the deadline as said, and the day it means when it can be read
    ("due Thursday (26 Nov 2026)")."""
    due = ""
    if entry.due and entry.due_ts is not None:
        # The deadline is the end of its day: the day is the one just before.
        day = format_when(datetime.fromtimestamp(entry.due_ts - 1, zone), "day")
        due = strings.LEDGER_DUE_ON.format(due=entry.due, day=day)
    elif entry.due:
        due = strings.LEDGER_DUE.format(due=entry.due)
    owner = strings.LEDGER_OWNER.format(owner=entry.owner) if entry.owner else ""
    return [part for part in (owner, due) if part]


def build_ledger_text(
    entries: Sequence[LedgerEntry],
    kind: str,
    timezone: str,
    prefix: str,
    *,
    total: int = 0,
    asked: Asked = "",
) -> str:
    """Newest first, each with who and by when (action items), the day it was said, and
    a link to the message it comes from. None: none yet, or (the room's ledger holding
    `total` of the kind) none of what was `asked`, and how many there are in all."""
    if not entries:
        if total and asked == "open":
            return strings.LEDGER_NONE_OPEN.format(count=total, prefix=prefix)
        if total and asked == "mine":
            return strings.LEDGER_NONE_MINE.format(count=total, prefix=prefix)
        if total and asked == "words":
            return strings.LEDGER_NONE_MATCHING[kind].format(count=total, prefix=prefix)
        return strings.LEDGER_NONE.format(prefix=prefix)
    zone = ZoneInfo(timezone)
    lines = [strings.LEDGER_DECISIONS if kind == "decision" else strings.LEDGER_ACTIONS]
    for entry in entries[:MAX_LISTED]:
        said = format_when(datetime.fromtimestamp(entry.ts, zone), "day")
        details = ", ".join(
            [*build_entry_details(entry, zone), strings.LEDGER_SAID.format(day=said)]
        )
        text = build_one_line(entry.text)
        lines.append(f"- {text} ({details}, [{strings.MESSAGE_LINK}]({entry.link}))")
    return "\n".join(lines)
