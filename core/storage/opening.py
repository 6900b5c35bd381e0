"""The databases of one process: a SQLite file per store in the data folder, or every
store in one PostgreSQL database (one connection pool for the process)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg

from core.config.storage import StorageSettings
from core.storage.database import Database, StorageError
from core.storage.postgres import PostgresDatabase
from core.storage.sqlite import SqliteDatabase

# The SQLite file of each store; the names are those of the releases before migrations,
# so that their files are adopted in place.
SQLITE_FILES = {
    "state": "state.sqlite3",
    "catalog": "knowledge.sqlite3",
    "memory": "memory.sqlite3",
    "feedback": "feedback.sqlite3",
    "evaluations": "evaluations.sqlite3",
    "summaries": "scheduler.sqlite3",
    "guardrails": "guardrails.sqlite3",
}


class Storage:
    def __init__(self, settings: StorageSettings, data_dir: Path) -> None:
        self.settings = settings
        self.data_dir = data_dir
        self._open: dict[str, Database] = {}
        self._shared: PostgresDatabase | None = None
        self._opening = asyncio.Lock()

    async def database(self, store: str) -> Database:
        """The database that `store` (a key of SQLITE_FILES) keeps its tables in."""
        async with self._opening:  # two first calls at once open one pool, not two
            return await self._database(store)

    async def _database(self, store: str) -> Database:
        if self.settings.shared:
            if self._shared is None:
                try:
                    self._shared = await PostgresDatabase.open(
                        self.settings.url, self.settings.password()
                    )
                except (OSError, asyncpg.PostgresError, StorageError) as exc:
                    # The URL holds no password (the config refuses one there).
                    raise StorageError(
                        f"PostgreSQL at {self.settings.url} cannot be used: {exc}"
                    ) from None
            return self._shared
        if store not in self._open:
            self._open[store] = await SqliteDatabase.open(self.data_dir / SQLITE_FILES[store])
        return self._open[store]

    async def close(self) -> None:
        for db in self._open.values():
            await db.close()
        self._open.clear()
        if self._shared is not None:
            await self._shared.close()
            self._shared = None
