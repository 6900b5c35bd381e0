"""Where the summary scheduler keeps its jobs: passwords from the environment only, the
shared PostgreSQL by default when there is one, and jobs that outlive the process."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import ConfigError, parse_config
from core.config.summaries import Schedule
from core.summaries.schedule import JOB_PREFIX, SummaryScheduler, build_job_store_url

MATRIX = """
[matrix]
homeserver = "http://127.0.0.1:8008"
user_id = "@bot:example.org"
password_env = "BOT_PASSWORD"
"""


def settings_of(extra: str, **env: str):
    return parse_config(
        MATRIX + extra, origin="bot.toml", env={"BOT_PASSWORD": "p", **env},
        base_dir=Path("/srv/bot"),
    )  # fmt: skip


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
    first.start()
    first.apply({"!room:example.org": Schedule(crontab="0 9 * * 1-5")})
    planned = first.scheduler.get_job(JOB_PREFIX + "!room:example.org").next_run_time
    first.stop()

    again = SummaryScheduler(store, str(tmp_path), fire_nothing)
    again.start()
    try:
        job = again.scheduler.get_job(JOB_PREFIX + "!room:example.org")
        assert job is not None and job.next_run_time == planned
    finally:
        again.stop()
