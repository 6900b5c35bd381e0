"""Rooms' `m.room.retention`: what was said before a room's lifetime is dropped from the
bot's stores (history lines and windows, summaries, the ledger, shared files, conversation
turns, the text of feedback records) every few minutes; and feedback records older than
`feedback.keep_days` go altogether. What the bot reuses is bounded at once by the room's
knowledge-since (see bot/inbox/audience.py); this only stops keeping it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from bot.features.files.keeper import FileKeeper
from bot.features.summaries.desk import SummaryDesk
from bot.inbox.audience import Audiences
from core.config import Settings
from core.feedback.store import FeedbackStore
from core.knowledge.search.vectors import KnowledgeUnavailable
from core.memory.memory import ConversationMemory
from core.storage.database import StorageError

log = logging.getLogger(__name__)
PURGE_EVERY_SECONDS = 600


async def run_retention(
    audiences: Audiences,
    memory: ConversationMemory,
    summaries: SummaryDesk | None,
    feedback: FeedbackStore,
    settings: Callable[[], Settings],
    files: FileKeeper | None = None,
) -> None:
    while True:
        for room_id, lifetime in list(audiences.retention.items()):
            cutoff = audiences.clock() - lifetime
            try:
                await memory.store.purge_turns_before(room_id, cutoff)
                await feedback.purge_room_before(room_id, cutoff)
                if memory.history is not None:
                    await memory.history.purge_before(room_id, cutoff)
                if summaries is not None:
                    await summaries.purge_before(room_id, cutoff)
                if files is not None:
                    await files.purge_before(room_id, cutoff)
            except (StorageError, KnowledgeUnavailable) as exc:
                log.warning("the retention of %s waits: %s", room_id, exc)
        try:
            kept = settings().feedback.keep_days * 86400
            removed = await feedback.purge_before(time.time() - kept)
            if removed:
                log.info("%d feedback records past feedback.keep_days removed", removed)
        except StorageError as exc:
            log.warning("old feedback records wait: %s", exc)
        await asyncio.sleep(PURGE_EVERY_SECONDS)
