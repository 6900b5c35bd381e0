"""The summary jobs: one APScheduler job per room, kept in a SQLAlchemy job store so
that they survive restarts; missed runs are coalesced into one.

APScheduler's job stores are synchronous: a slow database would stall the bot's event
loop (its sync, answers and lease renewal) if the scheduler ran there. So the scheduler
runs on threads of its own (BackgroundScheduler), every call the bot makes to it goes
through `asyncio.to_thread`, and a due job hands the summary to the bot's loop.

APScheduler stores a job's function by its import path, so the job calls the module
function `fire`, which finds the running scheduler by its key (the data folder): the
one place this process keeps a registry.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, ClassVar

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import SQLAlchemyError

from core.config.storage import StorageSettings
from core.config.summaries import Schedule, SummarySettings
from core.storage.database import StorageError

log = logging.getLogger(__name__)
JOB_PREFIX = "summary:"
RESULT_POLL_SECONDS = 5


def build_job_store_url(
    summaries: SummarySettings, storage: StorageSettings, data_dir: Path
) -> URL:
    """Where the scheduler keeps its jobs: `summaries.job_store`, else the [storage]
    PostgreSQL database (so that jobs move with the shared state), else a SQLite file in
    the data folder. Passwords come from the environment and never appear in the text:
    SQLAlchemy's URL masks them when printed."""
    if summaries.job_store:
        url = make_url(summaries.job_store)
        password = summaries.job_store_password()
    elif storage.shared:
        # The stores speak asyncpg; APScheduler's job store needs a synchronous driver.
        url = make_url(storage.url).set(drivername="postgresql+psycopg")
        password = storage.password()
    else:
        return make_url(f"sqlite:///{data_dir / 'scheduler.sqlite3'}")
    return url.set(password=password) if password else url


class SummaryScheduler:
    running: ClassVar[dict[str, SummaryScheduler]] = {}

    def __init__(
        self, url: URL | str, key: str, run: Callable[[str], Coroutine[Any, Any, None]]
    ) -> None:
        self.key = key
        self.run = run
        self.loop: asyncio.AbstractEventLoop | None = None
        self._starting: asyncio.Future[None] | None = None
        self.scheduler = BackgroundScheduler(
            jobstores={"default": SQLAlchemyJobStore(url=url, tablename="summary_jobs")},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        )

    @property
    def started(self) -> bool:
        """Whether a start has run to its end (a failed one leaves it stopped)."""
        return bool(self.scheduler.running)

    async def start(self) -> None:
        """Start on this loop: due summaries run here."""
        self.loop = asyncio.get_running_loop()
        SummaryScheduler.running[self.key] = self
        # Shielded: a start cancelled half-way still ends, and `stop` waits for it.
        self._starting = asyncio.ensure_future(asyncio.to_thread(self.scheduler.start))
        try:
            await asyncio.shield(self._starting)
        except SQLAlchemyError as exc:
            # The job store's database is away: a passing fault, like the stores'.
            raise StorageError(f"the summary schedules' job store: {type(exc).__name__}") from exc

    async def stop(self) -> None:
        """Shut the scheduler down, also one whose start was cancelled while under way
        (it would otherwise start afterwards and keep its job store's connections)."""
        SummaryScheduler.running.pop(self.key, None)
        if self._starting is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._starting)
        if self.scheduler.running:
            await asyncio.shield(asyncio.to_thread(self.scheduler.shutdown, wait=False))

    async def apply(self, wanted: Mapping[str, Schedule]) -> None:
        """Make the jobs match the config: one per scheduled room. A job whose schedule
        did not change keeps its next run time."""
        await asyncio.to_thread(self._apply, wanted)

    def _apply(self, wanted: Mapping[str, Schedule]) -> None:
        jobs = {job.id: job for job in self.scheduler.get_jobs()}
        for room, schedule in wanted.items():
            trigger = build_trigger(schedule)
            job = jobs.pop(JOB_PREFIX + room, None)
            if job is not None and str(job.trigger) == str(trigger):
                continue
            self.scheduler.add_job(
                "core.summaries.schedule:fire",
                trigger,
                args=[self.key, room],
                id=JOB_PREFIX + room,
                replace_existing=True,
            )
            log.info("summaries of %s scheduled: %s", room, trigger)
        for job_id in jobs:
            if job_id.startswith(JOB_PREFIX):
                self.scheduler.remove_job(job_id)


def build_trigger(schedule: Schedule) -> IntervalTrigger | CronTrigger:
    if schedule.crontab:
        return CronTrigger.from_crontab(schedule.crontab)
    return IntervalTrigger(seconds=schedule.seconds or 86_400)


def fire(key: str, room: str) -> None:
    """The job's function, on a scheduler thread: run the room's summary on the bot's
    loop, and wait for it (one run of a room at a time)."""
    scheduler = SummaryScheduler.running.get(key)
    if scheduler is None or scheduler.loop is None or scheduler.loop.is_closed():
        log.warning("a summary job for %s fired with no scheduler running", room)
        return
    running = asyncio.run_coroutine_threadsafe(scheduler.run(room), scheduler.loop)
    # Waited for in turns: a loop that stops meanwhile must not keep this thread, and
    # with it the process's exit, waiting for ever.
    while True:
        try:
            running.result(timeout=RESULT_POLL_SECONDS)
            return
        except concurrent.futures.TimeoutError:
            if scheduler.loop.is_closed() or SummaryScheduler.running.get(key) is not scheduler:
                running.cancel()
                return
