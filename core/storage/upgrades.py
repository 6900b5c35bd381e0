"""Numbered schema upgrades per store, applied in order when the store opens.

In the manner of mautrix-python's `UpgradeTable`: each store keeps its version in a
table of its own (`<store>_version`), so stores can share one PostgreSQL database and
each SQLite file carries its own. Every upgrade runs in one transaction with its version
bump, and on PostgreSQL under an advisory lock, so two processes starting at once
upgrade once. A database from before versions existed (no version table) is version 0:
upgrade 1 is the schema of that release, written with `IF NOT EXISTS`, so it adopts
such a database in place.

Alembic was the other candidate; its autogenerate does not know FTS5 tables, triggers or
tsvector columns, so every step would be hand-written SQL anyway, plus an environment
per store.
"""

from __future__ import annotations

import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from core.storage.database import Database, StorageError

Step = str | Callable[[Database], Awaitable[None]]


@dataclass(frozen=True)
class Upgrade:
    """One version's change, as SQL per backend (or a function of the connection)."""

    description: str
    sqlite: Step
    postgres: Step


class NewerSchema(StorageError):
    """The database was upgraded by a newer release; this one must not write to it."""


class UpgradeTable:
    def __init__(self, store: str, upgrades: list[Upgrade]) -> None:
        self.store = store
        self.upgrades = upgrades

    @property
    def latest(self) -> int:
        return len(self.upgrades)

    async def version(self, db: Database) -> int:
        async with db.transaction() as tx:
            return await self._version(tx)

    async def _version(self, tx: Database) -> int:
        """In a transaction; on PostgreSQL also under the store's advisory lock, held to
        the end of it (creating the same table twice at once fails there)."""
        if tx.dialect == "postgres":
            await tx.execute("SELECT pg_advisory_xact_lock(?)", _lock_key(self.store))
        await tx.execute(f"CREATE TABLE IF NOT EXISTS {self.store}_version (version INTEGER)")
        return int(await tx.fetchval(f"SELECT MAX(version) FROM {self.store}_version") or 0)

    async def upgrade(self, db: Database) -> int:
        """Bring the store's tables to the latest version; returns the version found."""
        found = await self.version(db)
        if found > self.latest:
            raise NewerSchema(
                f"the {self.store} tables are at version {found}, written by a newer release "
                f"than this one (which knows {self.latest}): run that release"
            )
        current = found
        while current < self.latest:
            async with db.transaction() as tx:
                current = await self._version(tx)
                if current >= self.latest:
                    break
                upgrade = self.upgrades[current]
                step = upgrade.sqlite if tx.dialect == "sqlite" else upgrade.postgres
                if isinstance(step, str):
                    await tx.run_script(step)
                else:
                    await step(tx)
                await tx.execute(f"DELETE FROM {self.store}_version")
                await tx.execute(f"INSERT INTO {self.store}_version VALUES (?)", current + 1)
        return found


def _lock_key(store: str) -> int:
    return zlib.crc32(f"knowledge-bot:{store}".encode())
