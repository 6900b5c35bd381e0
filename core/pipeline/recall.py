"""What the bot recalls of the room besides documents: windows of its earlier discussion
(searched like documents, in the room's own history only) and explicit memories."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from html import escape
from zoneinfo import ZoneInfo

from core import strings
from core.i18n.dates import format_when
from core.knowledge.documents import Hit
from core.ledger.entries import build_dated_entry
from core.ledger.text import build_entry_details
from core.llm.fencing import fence
from core.memory.history import HistoryHit
from core.memory.store import Memory
from core.pipeline.context import build_newest_within
from core.summaries.ledger_entries import LedgerEntry

HISTORY = "history"


def build_history_hit(found: HistoryHit, timezone: str) -> Hit:
    """A window of the room's discussion as a source that can be cited and linked."""
    window = found.window
    when = datetime.fromtimestamp(window.start_ts, ZoneInfo(timezone))
    return Hit(
        chunk_id=window.id,
        collection=HISTORY,
        document_id=window.id,
        source=HISTORY,
        title=strings.HISTORY_TITLE.format(when=f"{format_when(when, 'day')}, {when:%H:%M}"),
        url=window.link,
        heading="",
        text=window.text,
        position=0,
        public=False,
        score=0.0,
        room=window.room,
        distance=found.distance,
    )


def build_ledger_hit(entry: LedgerEntry, room: str, timezone: str) -> Hit:
    """A decision or action item of the room's ledger as a source, linked to its message."""
    when = format_when(datetime.fromtimestamp(entry.ts, ZoneInfo(timezone)), "day")
    title = strings.LEDGER_SOURCE_TITLE[entry.kind].format(when=when)
    details = ", ".join(
        build_entry_details(build_dated_entry(entry, ZoneInfo(timezone)), ZoneInfo(timezone))
    )
    key = f"ledger:{entry.kind}:{entry.event_id}"
    return Hit(
        chunk_id=key,
        collection=HISTORY,
        document_id=key,
        source=HISTORY,
        title=title,
        url=entry.link,
        heading="",
        text=entry.text + (f" ({details})" if details else ""),
        position=0,
        public=False,
        score=0.0,
        room=room,
    )


def build_memories_block(memories: Sequence[Memory], budget: int) -> str:
    """The newest memories that fit, oldest first, each with whom it is about."""
    lines = []
    for memory in memories:
        about = f' about="{escape(memory.user, quote=True)}"' if memory.user else ""
        lines.append(f"<memory{about}>{fence(memory.text)}</memory>")
    return build_newest_within(lines, budget)
