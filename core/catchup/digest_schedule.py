"""When a person's catch-up digest comes (pure): `every weekday 9:00`, `every day 18:30`,
`every monday 8am`, or an interval (`every 4h`, at least 10 seconds), in their time zone."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from babel.dates import get_day_names

from core import strings
from core.config.summaries import parse_schedule
from core.i18n.catalogs import spoken_language
from core.i18n.language import ENGLISH

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
DAY_SETS = {"day": tuple(range(7)), "weekday": tuple(range(5)), "weekend": (5, 6)}
AT = re.compile(
    r"^every\s+(?P<days>day|weekday|weekend|" + "|".join(DAYS) + r")s?\s+(?:at\s+)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<half>am|pm)?$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class DigestSchedule:
    """Days (0 = Monday) at a time of day, or every `seconds`."""

    days: tuple[int, ...] = ()
    hour: int = 0
    minute: int = 0
    seconds: int | None = None

    def describe(self) -> str:
        """When it comes, in the language being spoken ("every weekday at 09:00")."""
        if self.seconds is not None:
            # In the largest unit it is a whole number of (`every 4h`: "every 4 h").
            for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
                if self.seconds % size == 0:
                    return strings.DIGEST_EVERY_UNIT[unit].format(count=self.seconds // size)
            return strings.DIGEST_EVERY_SECONDS.format(seconds=self.seconds)
        time = f"{self.hour:02d}:{self.minute:02d}"
        named = {v: k for k, v in DAY_SETS.items()}.get(self.days)
        if named is not None:
            return strings.DIGEST_EVERY_DAYS[named].format(time=time)
        language = spoken_language()
        day = (
            DAYS[self.days[0]]
            if language == ENGLISH
            else get_day_names(locale=language)[self.days[0]]
        )
        return strings.DIGEST_EVERY_WEEKDAY.format(day=day, time=time)


def parse_digest_schedule(text: str) -> DigestSchedule | None:
    """The schedule in the words of `!catchup every …`; None when they cannot be read."""
    text = " ".join(text.split())
    if match := AT.match(text):
        hour, minute = int(match["hour"]), int(match["minute"] or 0)
        if match["half"]:
            if not 1 <= hour <= 12:
                return None
            hour = hour % 12 + (12 if match["half"].lower() == "pm" else 0)
        if hour > 23 or minute > 59:
            return None
        name = match["days"].lower()
        days = DAY_SETS.get(name) or (DAYS.index(name),)
        return DigestSchedule(days, hour, minute)
    try:
        interval = parse_schedule(text)
    except ValueError:
        return None
    return DigestSchedule(seconds=interval.seconds) if interval and interval.seconds else None


def decide_next_run(schedule: DigestSchedule, after: float, timezone: str) -> float:
    """The first time of the schedule after `after` (a timestamp), in `timezone`."""
    if schedule.seconds is not None:
        return after + schedule.seconds
    zone = ZoneInfo(timezone)
    moment = datetime.fromtimestamp(after, zone)
    for offset in range(8):
        day = moment + timedelta(days=offset)
        candidate = day.replace(hour=schedule.hour, minute=schedule.minute, second=0, microsecond=0)
        if candidate.weekday() in schedule.days and candidate.timestamp() > after:
            return candidate.timestamp()
    raise ValueError("a schedule without days")
