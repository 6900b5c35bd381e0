"""Rate limits kept in the shared store, so that every process counts the same minute
(a standby that takes over does not start from zero)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from core.guardrails.limits import WINDOW_SECONDS, RateLimiter
from core.storage.database import Database
from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

TABLES = """
CREATE TABLE IF NOT EXISTS rate_events (key TEXT NOT NULL, at DOUBLE PRECISION NOT NULL);
CREATE INDEX IF NOT EXISTS rate_events_key ON rate_events (key, at);
"""
UPGRADES = UpgradeTable("rate_limits", [Upgrade("questions per key and time", TABLES, TABLES)])


class RateLimits(Protocol):
    async def allows(self, limits: dict[str, int]) -> str | None:
        """Record one event under every key, or return the first key over its limit
        (0 is no limit) and record nothing."""
        ...


class LocalRateLimits:
    """In this process's memory: for one process, and for tests of the guardrails."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.limiter = RateLimiter(clock)

    async def allows(self, limits: dict[str, int]) -> str | None:
        return self.limiter.allows(limits)


class SqlRateLimits(SqlStore):
    """The last minute's questions per key, in one transaction per question. Times are
    the hosts' clocks."""

    upgrades = UPGRADES

    def __init__(self, db: Database, clock: Callable[[], float] = time.time) -> None:
        super().__init__(db)
        self.clock = clock

    async def allows(self, limits: dict[str, int]) -> str | None:
        now = self.clock()
        horizon = now - WINDOW_SECONDS
        async with self.db.transaction() as tx:
            if tx.dialect == "postgres":
                # Two processes counting one key at once would both find room: one at a
                # time per key (SQLite's BEGIN IMMEDIATE already serialises everything).
                for key in sorted(limits):
                    await tx.execute("SELECT pg_advisory_xact_lock(hashtext(?))", key)
            # Every key's old events, not only these keys': the table holds one minute.
            await tx.execute("DELETE FROM rate_events WHERE at <= ?", horizon)
            for key, limit in limits.items():
                if not limit:
                    continue
                count = await tx.fetchval("SELECT COUNT(*) FROM rate_events WHERE key = ?", key)
                if int(count) >= limit:
                    return key
            await tx.executemany(
                "INSERT INTO rate_events (key, at) VALUES (?, ?)", [(key, now) for key in limits]
            )
        return None
