"""What the homeserver lists for the bot's device decides whether its keys go up again."""

from __future__ import annotations

import pytest

from bot.matrix.device_keys import decide_listed

IDENTITY = {"curve25519": "c-ours", "ed25519": "e-ours"}
OURS = {"keys": {"curve25519:DEV": "c-ours", "ed25519:DEV": "e-ours"}}


@pytest.mark.parametrize(
    ("listed", "expected"),
    [
        (OURS, "ours"),
        (None, "none"),  # logged out: the device came back without keys
        ({}, "none"),
        ({"keys": {}}, "none"),
        # another client took the device id: its keys are left alone
        ({"keys": {"curve25519:DEV": "c-theirs", "ed25519:DEV": "e-theirs"}}, "other"),
        ({"keys": {"curve25519:DEV": "c-ours", "ed25519:DEV": "e-theirs"}}, "other"),
        ({"keys": {"ed25519:DEV": "e-ours"}}, "other"),
    ],
)
def test_decide_listed(listed, expected):
    assert decide_listed(listed, "DEV", IDENTITY) == expected
