"""What a summary covers: the range of `!summarize`, its heading, and the knowledge
document a scheduled summary becomes (pure)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from core import strings
from core.i18n.dates import format_when
from core.knowledge.documents import Document
from core.timerange import TimeRange

SUMMARY_ID_PREFIX = "room-summary/"


@dataclass(frozen=True)
class SummaryRange:
    start: float
    end: float


def decide_summary_range(
    args: str,
    *,
    now: datetime,
    found: TimeRange | None,
    last_summary: float | None,
    default_hours: int,
    in_thread: bool,
) -> SummaryRange | None:
    """The range asked for in words; else a whole thread, or the room since the bot's
    last summary of it (or the last `default_hours`). None: the words are not a time."""
    end = now.timestamp()
    if args.strip():
        return (
            SummaryRange(found.start.timestamp(), min(found.end.timestamp(), end))
            if found
            else None
        )
    if in_thread:
        return SummaryRange(0.0, end)
    return SummaryRange(last_summary or (now - timedelta(hours=default_hours)).timestamp(), end)


def _when(ts: float, timezone: str) -> str:
    return format_when(datetime.fromtimestamp(ts, ZoneInfo(timezone)))


def build_heading(
    first_ts: float, last_ts: float, count: int, timezone: str, *, thread: bool
) -> str:
    what = strings.SUMMARY_THIS_THREAD if thread else strings.SUMMARY_THIS_ROOM
    return strings.SUMMARY_HEADING.format(
        what=what, start=_when(first_ts, timezone), end=_when(last_ts, timezone), count=count
    )


def build_nothing_text(covered: SummaryRange, timezone: str, *, thread: bool) -> str:
    what = strings.SUMMARY_IN_THIS_THREAD if thread else strings.SUMMARY_IN_THIS_ROOM
    return strings.SUMMARY_NOTHING.format(
        what=what, start=_when(covered.start, timezone), end=_when(covered.end, timezone)
    )


def parse_summary_range(doc_id: str) -> SummaryRange | None:
    """The period a scheduled summary covers, from its document id."""
    _, _, span = doc_id.rpartition("/")
    start, _, end = span.partition("-")
    if not (doc_id.startswith(SUMMARY_ID_PREFIX) and start.isdigit() and end.isdigit()):
        return None
    return SummaryRange(float(start), float(end))


def build_summary_document(
    collection: str,
    room: str,
    room_name: str,
    covered: SummaryRange,
    markdown: str,
    first_link: str,
    *,
    encrypted: bool,
) -> Document:
    """A summary as knowledge of its room: only the room's members may get it, and it is
    dated with the period it covers, so that "what did we decide last month?" finds it."""
    start = datetime.fromtimestamp(covered.start, UTC)
    end = datetime.fromtimestamp(covered.end, UTC)
    room_key = hashlib.sha256(room.encode()).hexdigest()[:16]
    return Document(
        collection=collection,
        id=f"{SUMMARY_ID_PREFIX}{room_key}/{int(covered.start)}-{int(covered.end)}",
        title=f"Summary of {room_name}, {start:%d %b %Y %H:%M} – {end:%d %b %Y %H:%M} UTC",
        content=markdown,
        url=first_link,
        room=room,
        date=start.isoformat(),
        date_end=end.isoformat(),
        encrypted=encrypted,
    )
