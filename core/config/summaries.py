"""Settings of room summaries: on demand (!summarize) and on a schedule."""

from __future__ import annotations

import re
from dataclasses import dataclass

from apscheduler.triggers.cron import CronTrigger
from pydantic import Field, field_validator

from core.config.strict import Strict

INTERVAL = re.compile(
    r"^every\s+(\d+)\s*(s|sec|seconds?|m|min|minutes?|h|hours?|d|days?)$", re.IGNORECASE
)
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_INTERVAL_SECONDS = 366 * 86400


@dataclass(frozen=True)
class Schedule:
    """Either every `seconds`, or a five-field crontab."""

    seconds: int | None = None
    crontab: str | None = None


def parse_schedule(text: str) -> Schedule | None:
    """ "" (off), "every 30m", "every 6h", "every 1d", or "cron: 0 18 * * 1-5"."""
    text = text.strip()
    if not text:
        return None
    if (match := INTERVAL.match(text)) and len(match.group(1)) > 9:
        raise ValueError("a schedule runs at least once a year")
    if match:
        seconds = int(match.group(1)) * UNIT_SECONDS[match.group(2)[0].lower()]
        if seconds < 10:
            raise ValueError("a schedule runs at most every 10 seconds")
        if seconds > MAX_INTERVAL_SECONDS:
            raise ValueError("a schedule runs at least once a year")
        return Schedule(seconds=seconds)
    if text.lower().startswith("cron:"):
        crontab = text[5:].strip()
        try:
            CronTrigger.from_crontab(crontab)
        except ValueError as exc:
            raise ValueError(f"{crontab!r} is not a crontab: {exc}") from None
        return Schedule(crontab=crontab)
    raise ValueError(f"{text!r}: write 'every 6h', 'every 1d' or 'cron: 0 18 * * 1-5'")


def check_schedule(value: str | None) -> str | None:
    if value is not None:
        parse_schedule(value)
    return value


class SummarySettings(Strict):
    # The knowledge collection scheduled summaries are written into; it must be one of
    # [collections]. Summaries belong to their room: only its members may get them.
    collection: str | None = None
    # Also post scheduled summaries in their room.
    post_in_room: bool = False
    # Hours a !summarize covers when the bot has not summarised the room before.
    default_hours: int = Field(default=24, ge=1, le=24 * 90)
    # Messages read from the homeserver for one summary, at most.
    max_messages: int = Field(default=20_000, ge=10)
    # Tokens (estimated) of messages per model call; longer ranges are summarised in
    # parts that are then merged.
    part_tokens: int = Field(default=6000, ge=500, le=200_000)
    # [restart] Where the scheduler keeps its jobs and runs (a SQLAlchemy URL). Empty: a
    # SQLite file in bot.data_dir. Bot processes that share a database never run the
    # same room's summary twice.
    job_store: str = ""

    @field_validator("job_store")
    @classmethod
    def _url(cls, value: str) -> str:
        if value and "://" not in value:
            raise ValueError("must be a SQLAlchemy URL like postgresql://host/db")
        return value
