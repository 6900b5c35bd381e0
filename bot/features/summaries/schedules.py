"""The summary scheduler's jobs follow the config and the rooms the bot is in: one job
per room with a `summary_schedule` (when summaries have a collection to go to)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol

from bot.matrix.account import MatrixAccount
from bot.settings_holder import SettingsHolder
from core.config import Settings
from core.config.summaries import Schedule, parse_schedule

# How often the rooms and the config are looked at for a change (cheap: no I/O), and
# how often the jobs are applied even without one.
LOOK_SECONDS = 1.0
APPLY_ANYWAY_SECONDS = 30.0


class Jobs(Protocol):
    @property
    def started(self) -> bool: ...
    async def apply(self, wanted: Mapping[str, Schedule]) -> None: ...


def decide_summary_jobs(settings: Settings, rooms: frozenset[str]) -> dict[str, Schedule]:
    """The rooms that have a summary schedule, with it."""
    if not settings.summaries.collection:
        return {}
    wanted: dict[str, Schedule] = {}
    for room in sorted(rooms):
        schedule = parse_schedule(settings.room(room).summary_schedule)
        if schedule:
            wanted[room] = schedule
    return wanted


async def keep_summary_jobs(
    jobs: Jobs,
    matrix: MatrixAccount,
    settings: SettingsHolder,
    look_seconds: float = LOOK_SECONDS,
    start: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Apply the jobs the config and the rooms call for, at once when either changes (a
    room the bot just joined has its schedule within a second, not half a minute); with
    `start`, the scheduler is started first unless it runs already (a supervisor runs
    this again after a failure)."""
    if start is not None and not jobs.started:
        await start()
    applied: tuple[Settings, frozenset[str]] | None = None
    last = 0.0
    while True:
        current, rooms = settings.current, frozenset(matrix.rooms())
        changed = applied is None or applied[0] is not current or applied[1] != rooms
        if changed or time.monotonic() - last >= APPLY_ANYWAY_SECONDS:
            await jobs.apply(decide_summary_jobs(current, rooms))
            applied, last = (current, rooms), time.monotonic()
        await asyncio.sleep(look_seconds)
