"""Rooms' `m.room.retention`: what was said before a room's lifetime is dropped from the
bot's stores (history lines and windows, summaries, the ledger, shared files, conversation
turns, the text of feedback records) every few minutes; and feedback records older than
`feedback.keep_days` go altogether. What the bot reuses is bounded at once by the room's
knowledge-since (see bot/inbox/audience.py); this only stops keeping it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from bot.features.feature import Feature
from bot.inbox.audience import Audiences
from core.ids import RoomID
from core.knowledge.search.vectors import KnowledgeUnavailable
from core.storage.database import StorageError

log = logging.getLogger(__name__)
PURGE_EVERY_SECONDS = 600


async def run_retention(audiences: Audiences, features: Sequence[Feature]) -> None:
    """Every few minutes: each room's retention in every feature's stores, and what the
    features' own settings keep no longer."""
    while True:
        for room_id, lifetime in list(audiences.retention.items()):
            cutoff = audiences.clock() - lifetime
            try:
                for feature in features:
                    await feature.purge_room_before(RoomID(room_id), cutoff)
            except (StorageError, KnowledgeUnavailable) as exc:
                log.warning("the retention of %s waits: %s", room_id, exc)
        for feature in features:
            try:
                await feature.purge_expired()
            except StorageError as exc:
                log.warning("expired records wait: %s", exc)
        await asyncio.sleep(PURGE_EVERY_SECONDS)
