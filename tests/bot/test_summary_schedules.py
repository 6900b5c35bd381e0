"""The summary jobs follow the rooms and the config at once, not on a half-minute tick."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.features.summaries.schedules import decide_summary_jobs, keep_summary_jobs
from bot.matrix.fake import FakeAccount
from bot.settings_holder import SettingsHolder
from core.config import parse_config
from core.config.summaries import Schedule
from tests.bot.harness import BOT, CONFIG

SUMMARIES = """
[sources.matrix]
token = "matrix-token"
[collections.room-summaries]
source = "matrix"
[summaries]
collection = "room-summaries"
[room_defaults]
summary_schedule = "every 1h"
"""


def settings_of(extra: str, tmp_path):
    return parse_config(
        CONFIG + extra, origin="bot.toml", env={"BOT_PASSWORD": "x"}, base_dir=tmp_path
    )


@dataclass
class RecordedJobs:
    applied: list[dict[str, Schedule]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    started: bool = True

    async def apply(self, wanted: Mapping[str, Schedule]) -> None:
        self.applied.append(dict(wanted))
        self.changed.set()

    async def until(self, check) -> dict[str, Schedule]:
        async with asyncio.timeout(5):
            while not (self.applied and check(self.applied[-1])):
                self.changed.clear()
                await self.changed.wait()
        return self.applied[-1]


async def test_a_room_joined_and_a_config_edit_change_the_jobs_at_once(tmp_path):
    account, jobs = FakeAccount(BOT), RecordedJobs()
    settings = SettingsHolder(settings_of(SUMMARIES, tmp_path))
    keeping = asyncio.create_task(keep_summary_jobs(jobs, account, settings, look_seconds=0.01))
    try:
        assert await jobs.until(lambda wanted: True) == {}
        account.add_room("!r", ["@ann:fake.test"])
        joined = await jobs.until(lambda wanted: "!r" in wanted)
        assert joined["!r"].seconds == 3600
        settings.current = settings_of(SUMMARIES.replace("every 1h", "every 2h"), tmp_path)
        edited = await jobs.until(lambda wanted: wanted["!r"].seconds == 7200)
        assert list(edited) == ["!r"]
    finally:
        keeping.cancel()
        await asyncio.gather(keeping, return_exceptions=True)


def test_a_room_that_turns_its_schedule_off_has_no_job(tmp_path):
    settings = settings_of(SUMMARIES + '[rooms."!quiet"]\nsummary_schedule = ""\n', tmp_path)
    assert list(decide_summary_jobs(settings, frozenset({"!r", "!quiet"}))) == ["!r"]
