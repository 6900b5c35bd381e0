"""The shared backend: PostgreSQL through an asyncpg connection pool."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from core.storage.database import (
    CLOSE_SECONDS,
    Database,
    Dialect,
    Row,
    StorageError,
    storage_errors,
)

log = logging.getLogger(__name__)
POOL_SIZE = 10
# What the driver raises when the server is gone, a statement fails or a call times out.
DRIVER_ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError)
translated = storage_errors(DRIVER_ERRORS)


@functools.lru_cache(maxsize=1024)
def build_numbered_sql(sql: str) -> str:
    """The stores' `?` placeholders as PostgreSQL's `$1, $2, …` (none is in a literal)."""
    parts = sql.split("?")
    numbered = [parts[0]]
    for number, part in enumerate(parts[1:], start=1):
        numbered.append(f"${number}{part}")
    return "".join(numbered)


def _changed_rows(status: str) -> int:
    # asyncpg returns the command tag, e.g. "UPDATE 3" or "INSERT 0 1".
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else 0


async def _keep_session(connection: asyncpg.Connection) -> None:
    """asyncpg resets a connection each time it goes back to the pool (a round trip of its
    own after every statement). The stores keep no session state: no SET, LISTEN, cursors
    or session advisory locks (upgrades take transaction-scoped ones)."""


class PostgresConnection:
    dialect: Dialect = "postgres"

    def __init__(self, connection: asyncpg.Connection | asyncpg.Pool) -> None:
        self._connection = connection

    @translated
    async def execute(self, sql: str, *args: Any) -> int:
        return _changed_rows(await self._connection.execute(build_numbered_sql(sql), *args))

    @translated
    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if rows:
            await self._connection.executemany(build_numbered_sql(sql), rows)

    @translated
    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        return list(await self._connection.fetch(build_numbered_sql(sql), *args))

    @translated
    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        return await self._connection.fetchrow(build_numbered_sql(sql), *args)

    @translated
    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self._connection.fetchval(build_numbered_sql(sql), *args)

    @translated
    async def run_script(self, script: str) -> None:
        await self._connection.execute(script)

    def transaction(self) -> Any:
        raise RuntimeError("already in a transaction")

    async def close(self, wait_seconds: float = CLOSE_SECONDS) -> None:
        raise RuntimeError("close the database, not a transaction")


class PostgresDatabase(PostgresConnection):
    """A pool shared by every store of the process; each statement takes a connection."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        super().__init__(pool)
        self._pool = pool

    @classmethod
    async def open(cls, dsn: str, password: str | None) -> PostgresDatabase:
        pool = await asyncpg.create_pool(
            dsn,
            password=password,
            min_size=1,
            max_size=POOL_SIZE,
            command_timeout=60,
            reset=_keep_session,
        )
        encoding = await pool.fetchval("SHOW server_encoding")
        if encoding != "UTF8":
            await pool.close()
            # A SQL_ASCII database hands text back as bytes to the summary scheduler's
            # driver (psycopg), which then fails deep inside SQLAlchemy.
            raise StorageError(
                f"the database's encoding is {encoding}, not UTF8: create it with "
                "ENCODING 'UTF8' (createdb --encoding=UTF8 --locale=C.UTF-8 --template=template0)"
            )
        return cls(pool)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        # The statements inside raise StorageError themselves; this is for taking a
        # connection, BEGIN and COMMIT.
        try:
            async with self._pool.acquire() as connection, connection.transaction():
                yield PostgresConnection(connection)
        except DRIVER_ERRORS as exc:
            raise StorageError(f"{type(exc).__name__}: {exc}") from exc

    async def close(self, wait_seconds: float = CLOSE_SECONDS) -> None:
        try:
            async with asyncio.timeout(wait_seconds):
                await self._pool.close()
        except TimeoutError:
            log.warning("database connections still in use after %s s were cut", wait_seconds)
            self._pool.terminate()
