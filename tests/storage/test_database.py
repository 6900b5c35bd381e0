"""The database interface behaves the same on SQLite and PostgreSQL: placeholders,
transactions that commit or roll back whole, and numbered upgrades applied once."""

from __future__ import annotations

import asyncio

import pytest

from core.storage.database import Database, StorageError
from core.storage.postgres import build_numbered_sql
from core.storage.upgrades import NewerSchema, Upgrade, UpgradeTable

TABLE = "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)"


def test_placeholders_become_numbered_for_postgres():
    assert build_numbered_sql("SELECT ? + ?, ?") == "SELECT $1 + $2, $3"
    assert build_numbered_sql("SELECT 1") == "SELECT 1"


async def test_a_failed_transaction_leaves_nothing_behind(open_database):
    db: Database = await open_database()
    await db.execute(TABLE)
    with pytest.raises(RuntimeError):
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO notes VALUES (?, ?)", 1, "half of a change")
            raise RuntimeError("the second half failed")
    assert await db.fetch("SELECT * FROM notes") == []
    async with db.transaction() as tx:
        await tx.executemany("INSERT INTO notes VALUES (?, ?)", [(1, "a"), (2, "b")])
    assert [tuple(row) for row in await db.fetch("SELECT * FROM notes ORDER BY id")] == [
        (1, "a"),
        (2, "b"),
    ]
    assert await db.execute("UPDATE notes SET text = ? WHERE id > ?", "c", 0) == 2


async def test_other_callers_do_not_see_or_interleave_with_an_open_transaction(open_database):
    db: Database = await open_database()
    await db.execute(TABLE)
    inside = asyncio.Event()
    finish = asyncio.Event()

    async def slow_change() -> None:
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO notes VALUES (1, 'draft')")
            inside.set()
            await finish.wait()
            await tx.execute("UPDATE notes SET text = 'final' WHERE id = 1")

    change = asyncio.create_task(slow_change())
    await inside.wait()
    reader = asyncio.create_task(db.fetchval("SELECT text FROM notes WHERE id = 1"))
    await asyncio.sleep(0)
    finish.set()
    await change
    # The reader saw the table before the change or after it, never the draft.
    assert await reader in (None, "final")


def _table(steps: list[str]) -> UpgradeTable:
    return UpgradeTable("notes", [Upgrade(f"step {n}", sql, sql) for n, sql in enumerate(steps)])


async def test_upgrades_run_once_in_order_and_a_failed_one_is_not_recorded(open_database):
    db: Database = await open_database()
    first = _table([TABLE])
    assert await first.upgrade(db) == 0
    assert await first.version(db) == 1
    assert await first.upgrade(db) == 1, "opening again changes nothing"

    broken = _table([TABLE, "ALTER TABLE notes ADD COLUMN tag TEXT; SELECT no_such_function()"])
    with pytest.raises(Exception, match=r"no_such_function|no such function"):
        await broken.upgrade(db)
    assert await broken.version(db) == 1
    await db.execute("INSERT INTO notes (id, text) VALUES (1, 'kept')")  # no half-added column

    fixed = _table([TABLE, "ALTER TABLE notes ADD COLUMN tag TEXT"])
    assert await fixed.upgrade(db) == 1
    assert await fixed.version(db) == 2
    assert await db.fetchval("SELECT text FROM notes WHERE tag IS NULL") == "kept"


async def test_a_database_upgraded_by_a_newer_release_is_refused(open_database):
    db: Database = await open_database()
    await _table([TABLE, "ALTER TABLE notes ADD COLUMN tag TEXT"]).upgrade(db)
    with pytest.raises(NewerSchema, match=r"notes tables are at version 2.*knows 1"):
        await _table([TABLE]).upgrade(db)


async def test_two_processes_upgrading_at_once_upgrade_once(open_database):
    table = _table([TABLE, "ALTER TABLE notes ADD COLUMN tag TEXT"])
    one, two = await open_database(), await open_database()
    await asyncio.gather(table.upgrade(one), table.upgrade(two))
    assert await table.version(one) == 2


async def test_a_transaction_cancelled_at_any_point_leaves_the_database_usable(open_database):
    db: Database = await open_database()
    await db.execute(TABLE)

    async def change(n: int) -> None:
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO notes VALUES (?, ?)", n, "cancelled")
            await tx.execute("UPDATE notes SET text = text WHERE id = ?", n)

    for steps in range(6):  # cancelled before BEGIN ran, inside, around COMMIT, after
        task = asyncio.create_task(change(100 + steps))
        for _ in range(steps):
            await asyncio.sleep(0)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    async with db.transaction() as tx:
        await tx.execute("INSERT INTO notes VALUES (1, 'after')")
    reopened = await open_database()
    texts = {row[0] for row in await reopened.fetch("SELECT text FROM notes")}
    assert "after" in texts, "later transactions still commit"


async def test_a_failing_statement_or_a_database_gone_is_a_storage_error(open_database):
    db = await open_database()
    with pytest.raises(StorageError, match=r"no_such_table|no such table"):
        await db.fetchval("SELECT x FROM no_such_table")
    with pytest.raises(StorageError):
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO no_such_table VALUES (1)")
    await db.close()
    with pytest.raises(StorageError):
        await db.fetchval("SELECT 1")


async def test_closing_cuts_off_a_transaction_left_open_and_rolls_it_back(open_database):
    """A task that outlived its shutdown holds a transaction: the stop does not hang on
    it, and what the transaction wrote is not kept."""
    db = await open_database()
    await db.execute("CREATE TABLE notes (text TEXT)")
    inside, never = asyncio.Event(), asyncio.Event()

    async def left_open() -> None:
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO notes VALUES ('half-done')")
            inside.set()
            await never.wait()

    task = asyncio.create_task(left_open())
    try:
        await inside.wait()
        await asyncio.wait_for(db.close(wait_seconds=0.5), timeout=30)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    again = await open_database()
    assert await again.fetch("SELECT text FROM notes") == []
