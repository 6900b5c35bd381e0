"""Which writes the account lets through (bot/matrix/fence.py), as a table of cases."""

from __future__ import annotations

import pytest

from bot.matrix.fence import decide_write
from bot.matrix.types import RoomState
from core.ids import RoomID

PLAIN = RoomState(RoomID("!plain"), {})
SEALED = RoomState(RoomID("!sealed"), {}, encrypted=True)

CASES = {
    # name: (kind, holds_lease, room, sealed, encryption_on, refused because ...)
    "a message into a room the bot knows": ("message", True, PLAIN, False, True, None),
    "anything once the lease is lost": ("message", False, SEALED, False, True, "lease"),
    "joining once the lease is lost": ("room", False, None, False, True, "lease"),
    "joining a room the bot does not know yet": ("room", True, None, False, True, None),
    "a message into a room the bot does not know": (
        "message",
        True,
        None,
        False,
        True,
        "does not know",
    ),
    "an encrypted room, encryption off": (
        "message",
        True,
        SEALED,
        False,
        False,
        "encryption is off",
    ),
    "sealed text into an encrypted room": ("message", True, SEALED, True, True, None),
    "a redaction in an encrypted room, encryption off": (
        "signal",
        True,
        SEALED,
        False,
        False,
        None,
    ),
    "typing once the lease is lost": ("signal", False, PLAIN, False, True, "lease"),
    "typing in a room the bot does not know": ("signal", True, None, False, True, "does not know"),
    "sealed text into a room that is not encrypted": (
        "message",
        True,
        PLAIN,
        True,
        True,
        "not encrypted",
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_decide_write(case):
    kind, lease, room, sealed, encryption_on, refused = case
    reason = decide_write(
        kind=kind,
        holds_lease=lease,
        room=room,
        sealed=sealed,
        encryption_on=encryption_on,
        room_id="!x",
    )
    if refused is None:
        assert reason is None
    else:
        assert reason is not None and refused in reason
