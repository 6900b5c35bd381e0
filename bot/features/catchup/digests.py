"""Scheduled catch-ups (`!catchup every weekday 9:00`): kept durably per person, each
run claimed with a compare-and-set on its time, so that a run is delivered once even
across a restart or with two processes; a run missed while the bot was away comes once,
at the start."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.matrix.account import SEND_ERRORS
from core.catchup.digest_schedule import DigestSchedule, decide_next_run
from core.storage.database import StorageError
from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

log = logging.getLogger(__name__)
CHECK_EVERY_SECONDS = 5

V1 = """
CREATE TABLE IF NOT EXISTS digests (
    user_id TEXT PRIMARY KEY, days TEXT NOT NULL, hour INTEGER NOT NULL,
    minute INTEGER NOT NULL, seconds INTEGER, timezone TEXT NOT NULL,
    next_run DOUBLE PRECISION NOT NULL, last_run DOUBLE PRECISION NOT NULL
);
"""
# The language the person asked for it in (NULL: English, as before languages).
V2 = "ALTER TABLE digests ADD COLUMN language TEXT"
UPGRADES = UpgradeTable(
    "digests",
    [
        Upgrade("scheduled catch-ups per person", V1, V1),
        Upgrade("each in its person's language", V2, V2),
    ],
)


@dataclass(frozen=True)
class Digest:
    user_id: str
    schedule: DigestSchedule
    timezone: str
    next_run: float
    last_run: float  # when the previous digest was due (what it covered up to)
    # The language it is written in: the one it was asked for in; None: English.
    language: str | None = None


class DigestStore(Protocol):
    async def set_digest(self, digest: Digest) -> None: ...
    async def remove_digest(self, user_id: str) -> bool: ...
    async def due_digests(self, now: float) -> list[Digest]: ...
    async def claim_digest(self, user_id: str, due: float, following: float) -> bool: ...
    async def mark_delivered(self, user_id: str, due: float) -> None: ...


class SqlDigestStore(SqlStore):
    upgrades = UPGRADES

    async def set_digest(self, digest: Digest) -> None:
        s = digest.schedule
        await self.db.execute(
            "INSERT INTO digests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user_id)"
            " DO UPDATE SET days = excluded.days, hour = excluded.hour,"
            " minute = excluded.minute, seconds = excluded.seconds,"
            " timezone = excluded.timezone, next_run = excluded.next_run,"
            " last_run = excluded.last_run, language = excluded.language",
            digest.user_id, ",".join(map(str, s.days)), s.hour, s.minute, s.seconds,
            digest.timezone, digest.next_run, digest.last_run, digest.language,
        )  # fmt: skip

    async def remove_digest(self, user_id: str) -> bool:
        return await self.db.execute("DELETE FROM digests WHERE user_id = ?", user_id) > 0

    async def due_digests(self, now: float) -> list[Digest]:
        rows = await self.db.fetch("SELECT * FROM digests WHERE next_run <= ?", now)
        return [_digest(row) for row in rows]

    async def claim_digest(self, user_id: str, due: float, following: float) -> bool:
        """Take the run due at `due` (the next one becomes `following`); False when
        another process or an earlier run took it. What it covers moves on only once it
        is delivered (`mark_delivered`)."""
        moved = await self.db.execute(
            "UPDATE digests SET next_run = ? WHERE user_id = ? AND next_run = ?",
            following, user_id, due,
        )  # fmt: skip
        return moved == 1

    async def mark_delivered(self, user_id: str, due: float) -> None:
        """The run due at `due` was delivered: the next one starts from there."""
        await self.db.execute(
            "UPDATE digests SET last_run = ? WHERE user_id = ? AND last_run < ?",
            due, user_id, due,
        )  # fmt: skip


def _digest(row: Sequence[Any]) -> Digest:
    user_id, days, hour, minute, seconds, timezone, next_run, last_run, language = row
    schedule = DigestSchedule(tuple(int(d) for d in days.split(",") if d), hour, minute, seconds)
    return Digest(user_id, schedule, timezone, float(next_run), float(last_run), language)


class Deliver(Protocol):
    async def __call__(self, digest: Digest) -> None: ...


async def run_digests(store: DigestStore, deliver: Deliver) -> None:
    """Deliver the digests that are due, every few seconds, until cancelled. A failed
    delivery is logged; its run is not repeated, and the next one covers its messages
    (as after a crash between the claim and the delivery)."""
    while True:
        now = time.time()
        try:
            due = await store.due_digests(now)
        except StorageError as exc:
            log.warning("digests wait for the store: %s", exc)
            due = []
        for digest in due:
            following = decide_next_run(digest.schedule, max(now, digest.next_run), digest.timezone)
            if not await store.claim_digest(digest.user_id, digest.next_run, following):
                continue
            try:
                await deliver(digest)
            except SEND_ERRORS as exc:
                log.warning("a digest could not be delivered: %s", exc)
                continue
            except Exception:
                # One person's digest must not stop the others'; the next run covers
                # its messages.
                log.exception("a digest failed")
                continue
            try:
                await store.mark_delivered(digest.user_id, digest.next_run)
            except StorageError as exc:
                log.warning("a digest was delivered, not marked so (the next repeats it): %s", exc)
        await asyncio.sleep(CHECK_EVERY_SECONDS)
