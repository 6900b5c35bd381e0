"""A PostgreSQL database that is not UTF-8 is refused at start with what to do, rather
than failing later deep inside a driver (a SQL_ASCII database hands text back as bytes)."""

from __future__ import annotations

import uuid

import asyncpg
import pytest

from core.storage.database import StorageError
from core.storage.postgres import PostgresDatabase


async def test_a_sql_ascii_database_is_refused_naming_its_encoding(postgres):
    name = f"ascii_{uuid.uuid4().hex[:8]}"
    connection = await asyncpg.connect(postgres.url)
    try:
        await connection.execute(
            f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' "
            "TEMPLATE template0"
        )
    finally:
        await connection.close()
    with pytest.raises(StorageError, match="encoding is SQL_ASCII, not UTF8"):
        await PostgresDatabase.open(postgres.url_of(name), None)
    database = await PostgresDatabase.open(await postgres.create_database(), None)
    await database.close()
