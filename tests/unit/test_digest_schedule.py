"""When a digest comes (pure), and its store's claims (both backends)."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bot.features.catchup.digests import Digest, SqlDigestStore, run_digests
from bot.matrix.types import InviteRefused, MatrixError
from core import strings
from core.catchup.digest_schedule import (
    DigestSchedule,
    decide_next_run,
    parse_digest_schedule,
)
from core.i18n.language import speaking

SCHEDULES = {
    "weekdays": ("every weekday 9:00", DigestSchedule(tuple(range(5)), 9, 0)),
    "every day, at": ("every day at 18:30", DigestSchedule(tuple(range(7)), 18, 30)),
    "a day, am/pm": ("every Monday 8am", DigestSchedule((0,), 8, 0)),
    "noon pm": ("every friday 12pm", DigestSchedule((4,), 12, 0)),
    "an interval": ("every 4h", DigestSchedule(seconds=4 * 3600)),
    "no such hour": ("every day 25:00", None),
    "words": ("every now and then", None),
}


@pytest.mark.parametrize("text,expected", SCHEDULES.values(), ids=SCHEDULES.keys())
def test_parse_digest_schedule(text, expected):
    assert parse_digest_schedule(text) == expected


def at(text: str, zone: str = "Europe/Berlin") -> float:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(zone)).timestamp()


def test_the_next_run_is_the_next_matching_day_in_the_persons_time_zone():
    weekdays = DigestSchedule(tuple(range(5)), 9, 0)
    friday_evening = at("2026-11-27 18:00")
    assert decide_next_run(weekdays, friday_evening, "Europe/Berlin") == at("2026-11-30 09:00")
    before = at("2026-11-24 08:59")
    assert decide_next_run(weekdays, before, "Europe/Berlin") == at("2026-11-24 09:00")
    assert decide_next_run(weekdays, at("2026-11-24 09:00"), "Europe/Berlin") == at(
        "2026-11-25 09:00"
    ), "strictly after"
    assert decide_next_run(DigestSchedule(seconds=60), 100.0, "UTC") == 160.0


async def test_a_run_is_claimed_once(open_database):
    store = await SqlDigestStore.open(await open_database())
    schedule = DigestSchedule(tuple(range(5)), 9, 0)
    await store.set_digest(Digest("@bob:x", schedule, "Europe/Berlin", 100.0, 50.0))
    [due] = await store.due_digests(now=100.0)
    assert due == Digest("@bob:x", schedule, "Europe/Berlin", 100.0, 50.0)
    assert await store.claim_digest("@bob:x", 100.0, 200.0)
    assert not await store.claim_digest("@bob:x", 100.0, 200.0), "the other process"
    assert await store.due_digests(now=150.0) == []
    assert (await store.due_digests(now=200.0))[0].last_run == 50.0, "not delivered yet"
    await store.mark_delivered("@bob:x", 100.0)
    assert (await store.due_digests(now=200.0))[0].last_run == 100.0
    assert await store.remove_digest("@bob:x") and not await store.remove_digest("@bob:x")


async def test_a_digest_that_could_not_be_delivered_is_covered_by_the_next(
    open_database, monkeypatch
):
    """The homeserver refused a digest: the next one covers its messages too."""
    monkeypatch.setattr("bot.features.catchup.digests.CHECK_EVERY_SECONDS", 0.01)
    store = await SqlDigestStore.open(await open_database())
    now = time.time()
    await store.set_digest(Digest("@bob:x", DigestSchedule(seconds=1), "UTC", now - 1, now - 100))
    covered: list[float] = []
    twice = asyncio.Event()

    async def deliver(digest: Digest) -> None:
        covered.append(digest.last_run)
        if len(covered) == 1:
            raise MatrixError("the homeserver is away")
        twice.set()

    running = asyncio.create_task(run_digests(store, deliver))
    try:
        async with asyncio.timeout(10):
            await twice.wait()
    finally:
        running.cancel()
    assert covered == [now - 100, now - 100], "from where the undelivered one began"


async def test_a_digest_whose_person_blocks_invites_is_paused_and_reported(
    open_database, monkeypatch
):
    """Issue 46: the person blocks the bot's invites. The digest pauses (no retry every
    run), the admins are told why once, and setting it again or resuming runs it."""
    monkeypatch.setattr("bot.features.catchup.digests.CHECK_EVERY_SECONDS", 0.01)
    store = await SqlDigestStore.open(await open_database())
    now = time.time()
    await store.set_digest(Digest("@bob:x", DigestSchedule(seconds=1), "UTC", now - 1, now - 100))
    reports: list[str] = []
    reported = asyncio.Event()

    async def deliver(digest: Digest) -> None:
        raise InviteRefused("403 M_INVITE_BLOCKED", blocked=True)

    def report(text: str) -> None:
        reports.append(text)
        reported.set()

    running = asyncio.create_task(run_digests(store, deliver, report))
    try:
        async with asyncio.timeout(10):
            await reported.wait()
    finally:
        running.cancel()
    assert reports == [
        strings.DIGEST_PAUSED_REPORT.format(user="@bob:x", reason=strings.PRIVATE_CHAT_BLOCKED)
    ]
    paused = await store.digest_of("@bob:x")
    assert paused is not None and paused.paused == "invites_blocked"
    assert await store.due_digests(now=now + 3600) == [], "paused: not run again"
    assert await store.resume_digest("@bob:x") and not await store.resume_digest("@bob:x")
    assert await store.due_digests(now=now + 3600) != []


async def test_a_digest_keeps_the_language_it_was_asked_for_in(open_database):
    store = await SqlDigestStore.open(await open_database())
    schedule = DigestSchedule((0,), 8, 0)
    await store.set_digest(Digest("@ana:x", schedule, "Europe/Madrid", 100.0, 50.0, "es"))
    [due] = await store.due_digests(now=100.0)
    assert due.language == "es"
    with speaking("es"):
        assert schedule.describe() == "cada lunes a las 08:00"
    assert schedule.describe() == "every monday at 08:00"


DESCRIBED = {
    "seconds": ("every 10s", "every 10 s"),
    "hours, as written": ("every 4h", "every 4 h"),
    "minutes": ("every 90 minutes", "every 90 min"),
    "days": ("every 2d", "every 2 d"),
    "a time of day": ("every weekday 9:00", "every weekday at 09:00"),
}


@pytest.mark.parametrize("text,expected", DESCRIBED.values(), ids=DESCRIBED.keys())
def test_a_schedule_is_described_as_it_was_written(text, expected):
    schedule = parse_digest_schedule(text)
    assert schedule is not None and schedule.describe() == expected
