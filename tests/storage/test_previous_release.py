"""Files written by the release before versioned migrations open in place: every store
adopts its tables as version 1, upgrades to the latest, and keeps what was in them.

`tests/data/previous_release/` holds the six SQLite files that release wrote (made by
its own store classes at commit f21d270, with a little data in each). PostgreSQL had
no earlier release; its upgrade path from every earlier version is tested below."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.inbox.state import UPGRADES as STATE
from bot.inbox.state import SqlStateStore
from core.evaluation.store import UPGRADES as EVALUATIONS
from core.evaluation.store import SqlRunStore
from core.feedback.store import UPGRADES as FEEDBACK
from core.feedback.store import SqlFeedbackStore
from core.knowledge.documents import SearchFilters
from core.knowledge.ingest.jobs import UPGRADES as JOBS
from core.knowledge.ingest.jobs import SqlJobStore
from core.knowledge.search.catalog import UPGRADES as CATALOG
from core.knowledge.search.catalog import SqlCatalog
from core.memory.store import UPGRADES as MEMORY
from core.memory.store import SqlMemoryStore
from core.storage.opening import SQLITE_FILES
from core.storage.sqlite import SqliteDatabase
from core.storage.upgrades import UpgradeTable
from core.summaries.store import UPGRADES as SUMMARIES
from core.summaries.store import SqlSummaryMarks

PREVIOUS = Path(__file__).parent.parent / "data" / "previous_release"
ALL = (STATE, CATALOG, JOBS, MEMORY, FEEDBACK, EVALUATIONS, SUMMARIES)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(PREVIOUS, copy)
    return copy


async def open_file(data_dir: Path, store: str) -> SqliteDatabase:
    return await SqliteDatabase.open(data_dir / SQLITE_FILES[store])


async def test_the_inbox_and_sync_position_survive_the_upgrade(data_dir):
    db = await open_file(data_dir, "state")
    store = await SqlStateStore.open(db)
    assert await STATE.version(db) == STATE.latest
    assert await store.sync_token() == "s72_previous"
    [waiting] = await store.pending_events()
    assert waiting.source["event_id"] == "$waiting" and waiting.reply_event_id == "$placeholder"
    assert await store.bot_in_thread("!room:x", "$waiting")
    assert await store.joined_room("!dm:x") == (1700000000000, True)
    await db.close()


async def test_documents_their_keyword_index_and_queued_jobs_survive(data_dir):
    db = await open_file(data_dir, "catalog")
    catalog, jobs = await SqlCatalog.open(db), await SqlJobStore.open(db)
    assert (await catalog.document("handbook", "leave")).title == "Leave policy"
    found = await catalog.keyword_search("annual leave days", SearchFilters(), 5)
    assert found[0] == "handbook/leave#h#0"
    [queued] = await jobs.queued_jobs(10)
    assert queued.doc_id == "travel" and queued.payload["content"] == "Book trains."
    await db.close()


async def test_memories_votes_runs_and_summary_marks_survive(data_dir):
    memory_db, feedback_db, runs_db, marks_db = [
        await open_file(data_dir, name)
        for name in ("memory", "feedback", "evaluations", "summaries")
    ]
    memory = await SqlMemoryStore.open(memory_db)
    assert [m.text for m in await memory.memories("!room:x", "@ann:x")] == [
        "The team meets on Tuesdays."
    ]
    assert [line.text for line in await memory.lines_from("!room:x", 0)] == ["hello"]
    feedback = await SqlFeedbackStore.open(feedback_db)
    assert await feedback.vote_of("a1", "@bob:x") == "up"
    [exported] = [record async for record in feedback.export(since=0)]
    assert exported["readers"] == ["@ann:x"] and exported["trace"][0]["name"] == "retrieve"
    runs = await SqlRunStore.open(runs_db)
    assert [run.label for run in await runs.runs()] == ["baseline"]
    marks = await SqlSummaryMarks.open(marks_db)
    assert await marks.last_scheduled("!room:x") == 1700000000.0
    for db in (memory_db, feedback_db, runs_db, marks_db):
        await db.close()


EARLIER = [(table, version) for table in ALL for version in range(table.latest)]


@pytest.mark.parametrize(
    ("table", "version"), EARLIER, ids=[f"{t.store}-from-{v}" for t, v in EARLIER]
)
async def test_every_earlier_version_upgrades_to_the_latest(
    open_database, table: UpgradeTable, version: int
):
    db = await open_database()
    if version:  # a database left at `version` by an earlier release
        await UpgradeTable(table.store, table.upgrades[:version]).upgrade(db)
        assert await table.version(db) == version
    assert await table.upgrade(db) == version
    assert await table.version(db) == table.latest
