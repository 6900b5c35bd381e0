"""The messages a sync left out. After a pause (a restart, a failover, a slow answer
backlog) the homeserver sends only a room's last few events and marks the timeline
`limited`; the rest are read back page by page, down to the previous sync's token, so
that no message sent while the bot was away goes unanswered."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.matrix.account import MatrixAccount
from bot.matrix.types import EventSource

log = logging.getLogger(__name__)

PAGE = 100
# A room that said more than this while the bot was away: its older messages are left.
MAX_GAP_EVENTS = 2_000


@dataclass(frozen=True)
class Gap:
    events: list[EventSource]  # oldest first
    # Messages sent at this time (ms) or before may be missing from `events`: those the
    # account could not decrypt, or all beyond MAX_GAP_EVENTS; None when none is.
    left_out_ms: int | None = None


async def fetch_gap(matrix: MatrixAccount, room_id: str, prev_batch: str, since: str) -> Gap:
    """The events between the previous sync (`since`) and the timeline the sync returned
    (which starts at `prev_batch`), oldest first. Raises MatrixError when a page cannot
    be read: the batch is then read again, rather than its gap dropped."""
    events: list[EventSource] = []
    undecrypted: list[int] = []
    start: str | None = prev_batch
    while len(events) < MAX_GAP_EVENTS:
        page = await matrix.fetch_messages(room_id, start, since, PAGE, ask_keys=True)
        events.extend(page.events)
        undecrypted.extend(page.undecrypted_ms)
        if page.end is None:
            return Gap(events[::-1], max(undecrypted, default=None))
        start = page.end
    log.warning(
        "%s: more than %d events while away; older ones were not read", room_id, MAX_GAP_EVENTS
    )
    oldest = int(events[-1].get("origin_server_ts") or 0)
    return Gap(events[::-1], max([oldest, *undecrypted]))
