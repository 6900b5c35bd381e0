"""The one database interface every store is written against.

Stores write their SQL once, with `?` placeholders and the SQL that SQLite and
PostgreSQL share (`INSERT … ON CONFLICT`, `RETURNING`); where the two differ (full-text
search, a few types) a store asks `dialect`. The SQLite backend runs on aiosqlite's
thread and the PostgreSQL one on asyncpg, so no store call blocks the event loop.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, ParamSpec, Protocol, TypeVar

Dialect = Literal["sqlite", "postgres"]
P = ParamSpec("P")
# How long a close waits for work still holding the database (a statement that hangs, a
# transaction of a task that outlived its shutdown) before cutting it off.
CLOSE_SECONDS = 10.0
R = TypeVar("R")


class StorageError(Exception):
    """The stores cannot be opened or used (the database is unreachable, a statement
    failed); the message says why, fit for an admin's log. Both backends raise it for
    their drivers' errors, so that callers handle an outage without knowing the driver."""


def storage_errors(
    driver_errors: tuple[type[BaseException], ...],
) -> Callable[[Callable[P, Coroutine[Any, Any, R]]], Callable[P, Coroutine[Any, Any, R]]]:
    """A backend method whose driver errors are raised as StorageError."""

    def decorate(
        method: Callable[P, Coroutine[Any, Any, R]],
    ) -> Callable[P, Coroutine[Any, Any, R]]:
        @functools.wraps(method)
        async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return await method(*args, **kwargs)
            except driver_errors as exc:
                raise StorageError(f"{type(exc).__name__}: {exc}") from exc

        return wrapper

    return decorate


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

    async def close(self, wait_seconds: float = CLOSE_SECONDS) -> None:
        """Close, cutting off after `wait_seconds` what still holds the database (an
        open transaction is rolled back): a stop never hangs on its stores."""
        ...


async def erase_freed(db: Database) -> None:
    """After deleting text that people took back: on SQLite, write the journal into the
    file and empty it (deleted rows are zeroed in the file: `secure_delete` is on), so
    that no copy of them stays on disk. PostgreSQL's dead rows go with autovacuum."""
    if db.dialect == "sqlite":
        await db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
