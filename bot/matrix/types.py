"""What the bot reads from Matrix, as plain data: no matrix-nio type leaves `bot.matrix`.

Events stay their JSON (`source`): the inbox keeps them so, and the parsers in
bot/inbox/events.py read them so. Events of encrypted rooms arrive decrypted; those the account
cannot decrypt are left out (it asks for their keys itself).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from core.ids import RoomID, UserID

Membership = Literal["join", "invite"]
EventSource = dict[str, Any]


# Added to a decrypted event's JSON: the device it came from ("" when not known).
SENDER_DEVICE = "org.knowledgebot.sender_device"


class MatrixError(Exception):
    """A request to the homeserver failed; the text is for logs, not for users."""


class MediaTooLarge(MatrixError):
    """A file's download passed its size limit and was stopped there."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the file is over the limit of {limit} bytes; its download stopped")
        self.limit = limit


class InviteRefused(MatrixError):
    """The homeserver would not invite the person into a new room: they block invites
    (`M_INVITE_BLOCKED`, Matrix 1.18) when `blocked`, else another refusal (403)."""

    def __init__(self, message: str, *, blocked: bool) -> None:
        super().__init__(message)
        self.blocked = blocked


class WriteRefused(MatrixError):
    """The account would not write: this process lost the lease, or the room is not one
    the text may go to (see bot/matrix/fence.py)."""


@dataclass(frozen=True)
class RoomState:
    """A room as the last sync left it: members (joined or invited, the bot included),
    who may read its history, who may join, and whether it is encrypted."""

    room_id: RoomID
    members: Mapping[UserID, Membership]
    history_visibility: str = "shared"
    join_rule: str = "invite"
    encrypted: bool = False

    @property
    def member_count(self) -> int:
        return len(self.members)


@dataclass(frozen=True)
class ReadReceipt:
    room: str
    user_id: str
    event_id: str
    ts_ms: int  # when it was sent


@dataclass(frozen=True)
class JoinedRoomBatch:
    """One joined room's part of a sync: its state and timeline events, oldest first."""

    room_id: RoomID
    state: list[EventSource] = field(default_factory=list)
    timeline: list[EventSource] = field(default_factory=list)
    # The homeserver left events out before the timeline; they start at `prev_batch`.
    limited: bool = False
    prev_batch: str | None = None
    # When the timeline's events the account could not decrypt were sent (ms).
    undecrypted_ms: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Invite:
    room_id: RoomID
    inviter: UserID | None
    is_direct: bool


@dataclass(frozen=True)
class SyncBatch:
    next_batch: str
    joined: list[JoinedRoomBatch] = field(default_factory=list)
    invites: list[Invite] = field(default_factory=list)
    left: list[RoomID] = field(default_factory=list)
    # Main-timeline read receipts of others (not the bot's, not of threads).
    receipts: list[ReadReceipt] = field(default_factory=list)


@dataclass(frozen=True)
class MessagesPage:
    """A page of a room's events, newest first, and where the next (older) page starts;
    `end` None: there is no older page."""

    events: list[EventSource]
    end: str | None
    # When the page's events the account could not decrypt were sent (ms).
    undecrypted_ms: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Media:
    """A file of a message: its `mxc://` URL and, in an encrypted room, the key, IV and
    hash that come with it in the event (`file`), without which it is ciphertext."""

    url: str
    key: str | None = None
    iv: str | None = None
    sha256: str | None = None

    @property
    def encrypted(self) -> bool:
        return self.key is not None
