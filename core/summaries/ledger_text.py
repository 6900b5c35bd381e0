"""The ledger as a room reads it (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from core import strings
from core.i18n.dates import format_when
from core.summaries.ledger import LedgerEntry

MAX_LISTED = 25


def build_ledger_text(entries: Sequence[LedgerEntry], kind: str, timezone: str, prefix: str) -> str:
    """Newest first, each with who and by when (action items), its day, and a link to
    the message it comes from."""
    if not entries:
        return strings.LEDGER_NONE.format(prefix=prefix)
    zone = ZoneInfo(timezone)
    lines = [strings.LEDGER_DECISIONS if kind == "decision" else strings.LEDGER_ACTIONS]
    for entry in entries[:MAX_LISTED]:
        details = [
            strings.LEDGER_OWNER.format(owner=entry.owner) if entry.owner else "",
            strings.LEDGER_DUE.format(due=entry.due) if entry.due else "",
            format_when(datetime.fromtimestamp(entry.ts, zone), "day"),
        ]
        said = ", ".join(part for part in details if part)
        lines.append(f"- {entry.text} ({said}, [{strings.MESSAGE_LINK}]({entry.link}))")
    return "\n".join(lines)
