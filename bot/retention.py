"""Rooms' `m.room.retention`: what was said before a room's lifetime is dropped from the
bot's stores (history lines and windows, summaries, the ledger) every few minutes. What
the bot reuses is bounded at once by the room's knowledge-since (see bot/audience.py);
this only stops keeping it."""

from __future__ import annotations

import asyncio
import logging
import time

from bot.audience import Audiences
from bot.summaries import SummaryDesk
from core.knowledge.vectors import KnowledgeUnavailable
from core.memory.memory import ConversationMemory
from core.storage.database import StorageError

log = logging.getLogger(__name__)
PURGE_EVERY_SECONDS = 600


async def run_retention(
    audiences: Audiences, memory: ConversationMemory, summaries: SummaryDesk | None
) -> None:
    while True:
        for room_id, lifetime in list(audiences.retention.items()):
            cutoff = time.time() - lifetime
            try:
                if memory.history is not None:
                    await memory.history.purge_before(room_id, cutoff)
                if summaries is not None:
                    await summaries.purge_before(room_id, cutoff)
            except (StorageError, KnowledgeUnavailable) as exc:
                log.warning("the retention of %s waits: %s", room_id, exc)
        await asyncio.sleep(PURGE_EVERY_SECONDS)
