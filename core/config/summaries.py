"""Settings of room summaries: on demand (!summarize) and on a schedule."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from apscheduler.triggers.cron import CronTrigger
from pydantic import (
    Field,
    PrivateAttr,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from core.config.secrets import env_var_checker, secret_from_env
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
    collection: str | None = None
    """The knowledge collection scheduled summaries are written into; it must be one of
    [collections]. Summaries belong to their room: only its members may get them."""
    post_in_room: bool = False
    """Also post scheduled summaries in their room."""
    encrypted_rooms: Literal["collection", "room_only"] = "collection"
    """Scheduled summaries of encrypted rooms: "collection" writes them into `collection` like any
    other (decrypted text then rests in the catalog and Chroma, which may run on another host);
    "room_only" posts them in their room (with post_in_room) and keeps them out of the
    collection, so no question elsewhere is answered from them."""
    default_hours: int = Field(default=24, ge=1, le=24 * 90)
    """Hours a !summarize covers when the bot has not summarised the room before."""
    max_messages: int = Field(default=20_000, ge=10)
    """Messages one summary reads at most (a longer range gives its newest)."""
    part_tokens: int = Field(default=6000, ge=500, le=200_000)
    """Tokens (estimated) of messages per model call; longer ranges are summarised in parts that
    are then merged."""
    check_support: bool = True
    """Check each point of a model's summary against the messages it cites (one more model call,
    the `support` task's model): unsupported points are left out."""
    job_store: str = ""
    """Where the scheduler keeps its jobs and runs (a SQLAlchemy URL). Empty: the [storage]
    PostgreSQL database when there is one, else a SQLite file in bot.data_dir. The password, if
    any, comes from `job_store_password_env`."""
    job_store_password_env: str | None = None
    """The environment variable with job_store's password, if it needs one."""

    _job_store_password: SecretStr | None = PrivateAttr(default=None)

    @field_validator("job_store")
    @classmethod
    def _url(cls, value: str) -> str:
        if value and "://" not in value:
            raise ValueError("must be a SQLAlchemy URL like postgresql+psycopg://host/db")
        if urlsplit(value).password is not None:
            raise ValueError(
                "put the password in an environment variable (summaries.job_store_password_env)"
            )
        return value

    _check_env = field_validator("job_store_password_env")(env_var_checker("summaries"))

    @model_validator(mode="after")
    def _password_from_env(self, info: ValidationInfo) -> SummarySettings:
        self._job_store_password = secret_from_env(info, self.job_store_password_env)
        return self

    def job_store_password(self) -> str | None:
        return self._job_store_password.get_secret_value() if self._job_store_password else None
