"""Matrix user ids in the config."""

from __future__ import annotations

import re

USER_ID_PATTERN = re.compile(r"^@[^:\s]+:[^\s]+$")


def check_user_id(value: str) -> str:
    if not USER_ID_PATTERN.match(value):
        raise ValueError(f"{value!r} is not a Matrix user id like @name:example.org")
    return value


def check_user_ids(value: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(check_user_id(user) for user in value)
