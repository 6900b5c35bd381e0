"""Where the summary scheduler keeps its jobs: passwords from the environment only, the
shared PostgreSQL by default when there is one, and jobs that outlive the process."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from core.config import ConfigError, parse_config
from core.config.summaries import Schedule
from core.storage.database import StorageError
from core.summaries.schedule import JOB_PREFIX, SummaryScheduler, build_job_store_url

MATRIX = """
[matrix]
homeserver = "http://127.0.0.1:8008"
user_id = "@bot:example.org"
password_env = "BOT_PASSWORD"
"""


def settings_of(extra: str, **env: str):
    return parse_config(
        MATRIX + extra,
        origin="bot.toml",
        env={"BOT_PASSWORD": "p", **env},
        base_dir=Path("/srv/bot"),
    )


def job_store_of(extra: str, **env: str):
    settings = settings_of(extra, **env)
    return build_job_store_url(settings.summaries, settings.storage, settings.bot.data_dir)


def test_without_storage_the_jobs_are_a_sqlite_file_in_the_data_folder():
    url = job_store_of('[bot]\ndata_dir = "/srv/bot/data"\n')
    assert url.render_as_string() == "sqlite:////srv/bot/data/scheduler.sqlite3"


def test_with_a_shared_postgresql_the_jobs_go_there_with_its_password():
    url = job_store_of(
        '[storage]\nurl = "postgresql://bot@db:5432/bot"\npassword_env = "PG_PASSWORD"\n',
        PG_PASSWORD="pg-s3cret",
    )
    assert url.drivername == "postgresql+psycopg" and url.host == "db" and url.database == "bot"
    assert url.password == "pg-s3cret"
    assert "pg-s3cret" not in str(url), "printed, the URL hides the password"


def test_a_job_store_of_its_own_takes_its_password_from_the_environment():
    url = job_store_of(
        '[summaries]\njob_store = "postgresql+psycopg://jobs@other/jobs"\n'
        'job_store_password_env = "JOBS_PASSWORD"\n',
        JOBS_PASSWORD="jobs-s3cret",
    )
    assert (url.host, url.username, url.password) == ("other", "jobs", "jobs-s3cret")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            '[summaries]\njob_store = "postgresql+psycopg://jobs:inline@other/jobs"\n',
            "summaries.job_store: put the password in an environment variable",
        ),
        (
            '[summaries]\njob_store = "postgresql://x/y"\njob_store_password_env = "NOPE"\n',
            "summaries.job_store_password_env: the environment variable NOPE is not set",
        ),
    ],
    ids=["inline password", "unset variable"],
)
def test_a_job_store_password_in_the_file_is_refused_naming_the_key(extra, message):
    with pytest.raises(ConfigError) as refused:
        settings_of(extra)
    assert message in str(refused.value)
    assert "inline" not in str(refused.value)


async def fire_nothing(room: str) -> None:
    return None


async def test_jobs_kept_in_postgresql_outlive_the_scheduler(postgres, tmp_path):
    url = await postgres.create_database()
    settings = settings_of(f'[storage]\nurl = "{url}"\n')
    store = build_job_store_url(settings.summaries, settings.storage, tmp_path)
    first = SummaryScheduler(store, str(tmp_path), fire_nothing)
    await first.start()
    await first.apply({"!room:example.org": Schedule(crontab="0 9 * * 1-5")})
    planned = first.scheduler.get_job(JOB_PREFIX + "!room:example.org").next_run_time
    await first.stop()

    again = SummaryScheduler(store, str(tmp_path), fire_nothing)
    await again.start()
    try:
        job = again.scheduler.get_job(JOB_PREFIX + "!room:example.org")
        assert job is not None and job.next_run_time == planned
    finally:
        await again.stop()


async def test_a_job_store_that_waits_never_stalls_the_event_loop(tmp_path):
    """APScheduler's job store is synchronous: while its database is locked (a slow
    PostgreSQL, a busy SQLite file), the bot's loop goes on syncing and answering."""
    path = tmp_path / "scheduler.sqlite3"
    scheduler = SummaryScheduler(f"sqlite:///{path}", str(tmp_path), fire_nothing)
    await scheduler.start()
    try:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        applying = asyncio.create_task(
            scheduler.apply({"!room:example.org": Schedule(crontab="0 9 * * 1-5")})
        )
        ticks = 0
        while ticks < 20 and not applying.done():
            await asyncio.sleep(0.02)
            ticks += 1
        assert ticks == 20, "the loop ran on while the store waited for its database"
        holder.execute("ROLLBACK")
        holder.close()
        await applying
        assert scheduler.scheduler.get_job(JOB_PREFIX + "!room:example.org") is not None
    finally:
        await scheduler.stop()


async def test_a_due_job_runs_the_summary_on_the_bots_loop(tmp_path):
    ran = asyncio.Event()
    loops = []

    async def run(room: str) -> None:
        loops.append((room, asyncio.get_running_loop()))
        ran.set()

    scheduler = SummaryScheduler(f"sqlite:///{tmp_path / 's.sqlite3'}", str(tmp_path), run)
    await scheduler.start()
    try:
        await scheduler.apply({"!room:example.org": Schedule(seconds=1)})
        async with asyncio.timeout(10):
            await ran.wait()
        assert loops == [("!room:example.org", asyncio.get_running_loop())]
    finally:
        await scheduler.stop()


async def test_a_job_store_that_cannot_be_reached_is_a_storage_error(tmp_path):
    """So that a standby taking over while the database is away stands by again
    (bot/runtime/leadership.py) rather than ending the process."""
    scheduler = SummaryScheduler(
        "postgresql+psycopg://bot@127.0.0.1:1/jobs", str(tmp_path), fire_nothing
    )
    with pytest.raises(StorageError, match="summary schedules"):
        await scheduler.start()
    await scheduler.stop()
