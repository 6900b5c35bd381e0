"""The embedded backend: one SQLite file per store, through aiosqlite's worker thread."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from core.storage.database import CLOSE_SECONDS, Database, Dialect, Row, storage_errors

log = logging.getLogger(__name__)
BUSY_TIMEOUT_MS = 10_000
# aiosqlite raises ValueError for a closed connection.
DRIVER_ERRORS = (sqlite3.Error, OSError, ValueError)
translated = storage_errors(DRIVER_ERRORS)


def split_statements(script: str) -> list[str]:
    """A script's statements; a trigger's body keeps its inner semicolons."""
    statements, buffer = [], ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \n;"):
                statements.append(buffer.strip())
            buffer = ""
    return statements


class SqliteConnection:
    """Statements on the one connection, without the lock (inside a transaction)."""

    dialect: Dialect = "sqlite"

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._connection = connection

    @translated
    async def execute(self, sql: str, *args: Any) -> int:
        cursor = await self._connection.execute(sql, args)
        return cursor.rowcount

    @translated
    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        await self._connection.executemany(sql, rows)

    @translated
    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        return list(await self._connection.execute_fetchall(sql, args))

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        rows = await self.fetch(sql, *args)
        return rows[0] if rows else None

    async def fetchval(self, sql: str, *args: Any) -> Any:
        row = await self.fetchrow(sql, *args)
        return row[0] if row else None

    @translated
    async def run_script(self, script: str) -> None:
        # Statement by statement: sqlite3's executescript would commit the transaction
        # the script is meant to be part of.
        for statement in split_statements(script):
            await self._connection.execute(statement)

    def transaction(self) -> Any:
        raise RuntimeError("already in a transaction")

    async def close(self, wait_seconds: float = CLOSE_SECONDS) -> None:
        raise RuntimeError("close the database, not a transaction")


class SqliteDatabase:
    """One connection in autocommit mode (WAL), shared by the store's callers.

    A lock keeps a statement of one caller out of another caller's open transaction;
    transactions start with BEGIN IMMEDIATE so that their reads and writes are atomic
    against other processes using the same file too.
    """

    dialect: Dialect = "sqlite"

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._connection = connection
        self._plain = SqliteConnection(connection)
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path) -> SqliteDatabase:
        path.parent.mkdir(parents=True, exist_ok=True)
        pending = aiosqlite.connect(path, isolation_level=None)
        # aiosqlite's worker thread is not a daemon: a connection left open by a crash
        # would keep the process from exiting. SQLite's journal makes a cut-off write safe.
        thread = getattr(pending, "_thread", None)
        if thread is not None:
            thread.daemon = True
        connection = await pending
        await connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        await connection.execute("PRAGMA journal_mode = WAL")
        await connection.execute("PRAGMA synchronous = NORMAL")
        # Deleted rows are overwritten, not left in free pages: the stores keep message
        # text that must be gone from disk once its message is redacted.
        await connection.execute("PRAGMA secure_delete = ON")
        return cls(connection)

    async def execute(self, sql: str, *args: Any) -> int:
        async with self._lock:
            return await self._plain.execute(sql, *args)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        async with self.transaction() as db:
            await db.executemany(sql, rows)

    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        async with self._lock:
            return await self._plain.fetch(sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        async with self._lock:
            return await self._plain.fetchrow(sql, *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        async with self._lock:
            return await self._plain.fetchval(sql, *args)

    async def run_script(self, script: str) -> None:
        async with self._lock:
            await self._plain.run_script(script)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        async with self._lock:
            try:
                await self._begin_or_commit("BEGIN IMMEDIATE")
                yield self._plain
                await self._begin_or_commit("COMMIT")
            except BaseException:
                # Also when cancelled while BEGIN or COMMIT ran on the worker thread: the
                # connection must not stay in a transaction that later writes would join.
                await asyncio.shield(self._roll_back())
                raise

    @translated
    async def _begin_or_commit(self, statement: str) -> None:
        await self._connection.execute(statement)

    async def _roll_back(self) -> None:
        # Queued behind the BEGIN on the worker thread, so it runs after it, if it ran.
        try:
            await self._connection.execute("ROLLBACK")
        except sqlite3.OperationalError:
            pass  # no transaction is open: BEGIN failed, or COMMIT ended it

    async def close(self, wait_seconds: float = CLOSE_SECONDS) -> None:
        held = False
        try:
            async with asyncio.timeout(wait_seconds):
                held = await self._lock.acquire()
        except TimeoutError:
            # Closing the connection rolls the transaction back.
            log.warning("a transaction still open after %s s was cut off", wait_seconds)
        try:
            await self._connection.close()
        finally:
            if held:
                self._lock.release()
