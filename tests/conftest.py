"""Fixtures shared by the test folders.

The run is spread over several processes (pytest-xdist, see tests/run.sh): a fixture of
scope "session" is one per worker process, so each worker starts its own PostgreSQL,
Synapse (tests/e2e/conftest.py), Chroma server and embedding model when a test first asks,
on a free loopback port and in that worker's own temporary folders. Nothing a test starts
is shared with a test running beside it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from core.knowledge.search.embedding import Embedders
from core.storage.database import Database
from core.storage.postgres import PostgresDatabase
from core.storage.sqlite import SqliteDatabase
from tests.support.fake_llm import FakeLlm
from tests.support.fake_speech import FakeSpeech
from tests.support.postgres import PostgresServer


@pytest.fixture(scope="session")
def embedders() -> Embedders:
    """The real embedding model, loaded once for the whole run."""
    return Embedders()


@pytest.fixture
async def llm() -> AsyncIterator[FakeLlm]:
    """The scripted OpenAI-compatible server (see tests/support/fake_llm.py)."""
    server = await FakeLlm().start()
    yield server
    await server.close()


@pytest.fixture
async def speech() -> AsyncIterator[FakeSpeech]:
    """The scripted transcription endpoint (see tests/support/fake_speech.py)."""
    server = await FakeSpeech().start()
    yield server
    await server.close()


# The store backends every store test runs against (see core/storage).
BACKENDS = ("sqlite", "postgres")


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the run, started on first use."""
    server = PostgresServer().start()
    yield server
    server.stop()


def run_backend() -> str:
    """The backend of the tests that are not store tests: SQLite, or PostgreSQL when the
    run was started with TEST_STORAGE=postgres."""
    return os.environ.get("TEST_STORAGE", "sqlite")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Store tests run once per backend."""
    return request.param


@pytest.fixture
async def open_database(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Callable[[], Awaitable[Database]]]:
    """Opens the test's own database on the backend, again each call (as a restarted
    process would); all are closed when the test ends."""
    async for opener in _databases(backend, tmp_path, request):
        yield opener


@pytest.fixture
async def run_database(
    tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Callable[[], Awaitable[Database]]]:
    """Like `open_database`, on the run's backend (see `run_backend`)."""
    async for opener in _databases(run_backend(), tmp_path, request):
        yield opener


async def _databases(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Callable[[], Awaitable[Database]]]:
    url = (
        await request.getfixturevalue("postgres").create_database() if backend == "postgres" else ""
    )
    opened: list[Database] = []

    async def open_() -> Database:
        if url:
            db: Database = await PostgresDatabase.open(url, None)
        else:
            db = await SqliteDatabase.open(tmp_path / "store.sqlite3")
        opened.append(db)
        return db

    yield open_
    for db in opened:
        await db.close()


@pytest.fixture
async def storage_toml(request: pytest.FixtureRequest) -> str:
    """The `[storage]` section of the configs tests write: none (SQLite files in the data
    folder) unless the run was started with TEST_STORAGE=postgres, then a fresh
    PostgreSQL database per test. So the whole suite runs on either backend."""
    if run_backend() != "postgres":
        return ""
    url = await request.getfixturevalue("postgres").create_database()
    return f'\n[storage]\nurl = "{url}"\n'
