"""Whether the account may write: one pure decision that every write goes through.

A process that lost the account's lease writes nothing (the one that took over may have
written since). Text goes only into a room the account knows from its sync: nio sends
into a room it does not know unencrypted, whatever the room is. An encrypted room gets
only encrypted events. Text `sealed` (it holds what was said in an encrypted room) goes
only into an encrypted room, where the homeserver cannot read it.
"""

from __future__ import annotations

from typing import Literal

from bot.matrix.types import RoomState

WriteKind = Literal["message", "signal", "room"]


def decide_write(
    *,
    kind: WriteKind,
    holds_lease: bool,
    room: RoomState | None,
    sealed: bool = False,
    encryption_on: bool = False,
    room_id: str = "",
) -> str | None:
    """Why the write is refused, for the logs; None: it may go. `kind` "message" is
    text posted into a room (a message, an edit, a file); "signal" carries no text (a
    redaction, typing); "room" changes which rooms the bot is in (create, join, leave)."""
    if not holds_lease:
        return "this process no longer holds the account's lease"
    if kind == "room":
        return None
    if room is None:
        return f"the bot does not know {room_id} (not joined, or not synced since)"
    if kind == "signal":
        return None
    if room.encrypted and not encryption_on:
        return f"{room_id} is encrypted and the bot's encryption is off"
    if sealed and not room.encrypted:
        return f"text of an encrypted room may not go to {room_id}, which is not encrypted"
    return None
