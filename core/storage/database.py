"""The one database interface every store is written against.

Stores write their SQL once, with `?` placeholders and the SQL that SQLite and
PostgreSQL share (`INSERT … ON CONFLICT`, `RETURNING`); where the two differ (full-text
search, a few types) a store asks `dialect`. The SQLite backend runs on aiosqlite's
thread and the PostgreSQL one on asyncpg, so no store call blocks the event loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, Protocol

Dialect = Literal["sqlite", "postgres"]


class StorageError(Exception):
    """The stores cannot be opened; the message says why, fit for an admin."""


Row = Sequence[Any]


class Database(Protocol):
    dialect: Dialect

    async def execute(self, sql: str, *args: Any) -> int:
        """Run one statement; returns how many rows it changed."""
        ...

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...

    async def fetch(self, sql: str, *args: Any) -> list[Row]: ...

    async def fetchrow(self, sql: str, *args: Any) -> Row | None: ...

    async def fetchval(self, sql: str, *args: Any) -> Any:
        """The first column of the first row, or None."""
        ...

    async def run_script(self, script: str) -> None:
        """Several statements at once, with no parameters (migrations)."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[Database]:
        """A connection in a transaction: committed when the block ends, rolled back on
        error. Inside the block, use only the connection it gives (the SQLite backend has
        one connection, held by the block)."""
        ...

    async def close(self) -> None: ...
