"""A stop is never lost: each long-running loop, cancelled at the very moment its inner wait
returns, ends cancelled. On Python 3.11 `asyncio.wait_for` returned the inner result there
and dropped the cancellation (a shutdown hung on one such call); the linter now bans it in
bot/ and core/ (pyproject.toml, TID251)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from bot.matrix.fake import FakeAccount
from core.knowledge.ingest.jobs import Job
from core.knowledge.ingest.queue import IngestQueue

ROOT = Path(__file__).parents[2]


class IdleJobs:
    """A job store with nothing to claim, which says when the worker went idle, and a
    queued job whose outcome a waiter awaits."""

    def __init__(self) -> None:
        self.idle = asyncio.Event()

    async def void_dead_claims(self) -> None:
        pass

    async def claim_jobs(self, worker: str, limit: int, now: float, lease: float) -> list[Job]:
        self.idle.set()
        return []

    async def job(self, job_id: int) -> Job | None:
        self.idle.set()
        return Job(job_id, "handbook", "page", "put", None, "queued", None)


async def cancelled_as_it_returns(task: asyncio.Task, release) -> bool:
    """Cancel `task` in the same turn of the loop as its inner wait is released; whether it
    ended cancelled (it is given five seconds to end at all)."""
    release()
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=5)
    return bool(done) and task.cancelled()


async def test_the_ingestion_worker_stops_when_woken_as_it_is_cancelled():
    jobs = IdleJobs()
    queue = IngestQueue(jobs, indexer=None)  # type: ignore[arg-type]
    task = asyncio.create_task(queue.run())
    await jobs.idle.wait()
    await asyncio.sleep(0)  # into the idle wait
    assert await cancelled_as_it_returns(task, queue._wakeup.set)


async def test_a_wait_for_a_job_stops_when_the_job_ends_as_it_is_cancelled():
    jobs = IdleJobs()
    queue = IngestQueue(jobs, indexer=None)  # type: ignore[arg-type]
    task = asyncio.create_task(queue.wait(7))
    await jobs.idle.wait()
    await asyncio.sleep(0)  # into the wait for the job's outcome
    finished = queue._finished[7]
    assert await cancelled_as_it_returns(task, lambda: finished.set_result(None))


async def test_the_accounts_sync_stops_when_an_event_arrives_as_it_is_cancelled():
    account = FakeAccount()
    task = asyncio.create_task(account.sync(None, 30_000, False))
    await asyncio.sleep(0)  # into the long poll
    arrive = lambda: account.add_event("!room", "@alice:fake.test", "m.room.message", {})  # noqa: E731
    assert await cancelled_as_it_returns(task, arrive)


def test_the_linter_refuses_a_new_wait_for_in_the_bot_and_the_core():
    source = "import asyncio\n\n\nasync def f() -> None:\n    await asyncio.wait_for(asyncio.sleep(1), 1)\n"
    for place in ("bot/features/new.py", "core/new.py"):
        checked = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--stdin-filename", place, "-"],
            input=source,
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert checked.returncode == 1 and "TID251" in checked.stdout, checked.stdout
