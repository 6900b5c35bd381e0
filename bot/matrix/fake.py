"""An account in memory, for tests of the bot's logic without a homeserver.

It keeps rooms, their timelines and what the bot wrote, and fences writes with the same
decision as the real account. `say` puts a person's message into a room and into the
next sync batch; `fail` makes the next call of a method fail as the homeserver would.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from bot.matrix.account import MatrixAccount, check_write
from bot.matrix.fence import WriteKind
from bot.matrix.types import (
    EventSource,
    Invite,
    InviteRefused,
    JoinedRoomBatch,
    MatrixError,
    Media,
    MediaTooLarge,
    Membership,
    MessagesPage,
    ReadReceipt,
    RoomState,
    SyncBatch,
)
from core.ids import RoomID, UserID

T = TypeVar("T")


@dataclass
class Written:
    """One write of the bot, as the homeserver would have taken it."""

    kind: str  # "message", "redaction", "typing", "room", "join", "leave"
    room_id: str
    content: dict[str, Any] = field(default_factory=dict)
    event_id: str = ""
    sealed: bool = False


class FakeAccount:
    def __init__(self, user_id: str = "@bot:fake.test", *, encryption_on: bool = True) -> None:
        self.user_id = UserID(user_id)
        self.homeserver = "https://fake.test"
        self.lease_left: Callable[[], float] = lambda: math.inf
        self._encryption_on = encryption_on
        self._rooms: dict[RoomID, RoomState] = {}
        self._room_names: dict[str, str] = {}
        self.events: dict[str, EventSource] = {}
        self.timelines: dict[str, list[str]] = {}
        self.written: list[Written] = []
        self.display = "Knowledge Bot"
        # People whose invite settings block the bot's invites.
        self.blocks_invites: set[str] = set()
        # Devices their owner never cross-signed, as (user, device).
        self.untrusted_devices: set[tuple[str, str]] = set()
        self.cross_signed = False
        self._names: dict[tuple[str, str], str] = {}
        self._next: list[tuple[str, EventSource]] = []
        self._invites: list[Invite] = []
        self._receipts: list[ReadReceipt] = []
        self._arrived = asyncio.Event()
        self._wrote = asyncio.Event()
        self._failures: dict[str, list[Exception]] = {}
        self._count = 0
        self._txns: dict[str, str] = {}
        self._batch = 0
        # Files on the fake homeserver's media repository, by mxc:// URL (kept in clear:
        # the fake does not encrypt).
        self.media: dict[str, bytes] = {}
        # The reads of the rooms' messages: (room, start token), and (room, ts_ms) asked
        # for a token.
        self.message_reads: list[tuple[str, str | None]] = []
        self.token_asks: list[tuple[str, int]] = []

    @property
    def encryption_on(self) -> bool:
        return self._encryption_on

    @property
    def last_retry(self) -> float | None:
        return None

    # Setting the scene.

    def add_room(
        self,
        room_id: str,
        members: Mapping[str, Membership] | list[str],
        *,
        encrypted: bool = False,
        history_visibility: str = "shared",
        join_rule: str = "invite",
        name: str | None = None,
    ) -> RoomState:
        """A room the bot is in, with `members` (joined, unless given as a mapping)."""
        given: Mapping[str, Membership] = (
            members if isinstance(members, Mapping) else dict.fromkeys(members, "join")
        )
        everyone: dict[UserID, Membership] = {self.user_id: "join"}
        everyone.update({UserID(user): state for user, state in given.items()})
        room = RoomState(RoomID(room_id), everyone, history_visibility, join_rule, encrypted)
        self._rooms[RoomID(room_id)] = room
        self._room_names[room_id] = name or room_id
        self.timelines.setdefault(room_id, [])
        return room

    def set_room(self, room_id: str, **changes: Any) -> None:
        self._rooms[RoomID(room_id)] = replace(self._rooms[RoomID(room_id)], **changes)

    def set_member_name(self, room_id: str, user_id: str, name: str) -> None:
        self._names[(room_id, user_id)] = name

    def say(self, room_id: str, sender: str, body: str, **content: Any) -> EventSource:
        """A person's text message, in the room and in the next sync batch."""
        return self.add_event(
            room_id, sender, "m.room.message", {"msgtype": "m.text", "body": body, **content}
        )

    def add_event(
        self, room_id: str, sender: str, kind: str, content: dict[str, Any], **top: Any
    ) -> EventSource:
        source = {
            "type": kind,
            "sender": sender,
            "content": content,
            "room_id": room_id,
            "event_id": self._new_id(),
            "origin_server_ts": int(time.time() * 1000),
            **top,
        }
        self._keep(room_id, source)
        self._next.append((room_id, source))
        self._arrived.set()
        return source

    def invite(self, room_id: str, inviter: str, *, direct: bool = False) -> None:
        self._invites.append(Invite(RoomID(room_id), UserID(inviter), direct))
        self._arrived.set()

    def read_receipt(self, room_id: str, user_id: str, event_id: str) -> None:
        ts = int(self.events[event_id]["origin_server_ts"])
        self._receipts.append(ReadReceipt(room_id, user_id, event_id, ts))

    def fail(self, method: str, error: Exception | None = None) -> None:
        """The next call of `method` raises `error` (a MatrixError by default)."""
        self._failures.setdefault(method, []).append(error or MatrixError(f"{method} failed"))

    async def wait_for(self, found: Callable[[], T | None], seconds: float = 10.0) -> T:
        """What `found` returns once it returns something, checked after each write;
        TimeoutError after `seconds`."""
        async with asyncio.timeout(seconds):
            while (result := found()) is None:
                self._wrote.clear()
                await self._wrote.wait()
        return result

    def messages(self, room_id: str | None = None) -> list[Written]:
        """What the bot posted (messages and edits), oldest first."""
        return [w for w in self.written if w.kind == "message" and room_id in (None, w.room_id)]

    def _note(self, written: Written) -> None:
        self.written.append(written)
        self._wrote.set()

    def _check(self, method: str) -> None:
        pending = self._failures.get(method)
        if pending:
            raise pending.pop(0)

    def _fence(self, kind: WriteKind, room_id: str, sealed: bool = False) -> None:
        check_write(self, kind, room_id, sealed)

    def _new_id(self) -> str:
        self._count += 1
        return f"$fake{self._count}"

    def _keep(self, room_id: str, source: EventSource) -> None:
        self.events[source["event_id"]] = source
        self.timelines.setdefault(room_id, []).append(source["event_id"])

    # Reads.

    def rooms(self) -> Mapping[RoomID, RoomState]:
        return self._rooms

    def room(self, room_id: str) -> RoomState | None:
        return self._rooms.get(RoomID(room_id))

    def room_name(self, room_id: str) -> str:
        return self._room_names.get(room_id, room_id)

    def member_name(self, room_id: str, user_id: str) -> str | None:
        room = self._rooms.get(RoomID(room_id))
        if room is None or user_id not in room.members:
            return None
        return self._names.get((room_id, user_id), user_id)

    async def sync(self, since: str | None, timeout_ms: int, full_state: bool) -> SyncBatch:
        self._check("sync")
        if not (self._next or self._invites) and timeout_ms > 0:
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout_ms / 1000):
                    await self._arrived.wait()
        events, self._next = self._next, []
        invites, self._invites = self._invites, []
        receipts, self._receipts = self._receipts, []
        by_room: dict[str, list[EventSource]] = {}
        for room_id, source in events:
            by_room.setdefault(room_id, []).append(source)
        self._batch += 1
        joined = [JoinedRoomBatch(RoomID(room), [], timeline) for room, timeline in by_room.items()]
        return SyncBatch(f"s{self._batch}", joined, invites, [], receipts)

    async def device_trusted(self, user_id: str, device_id: str) -> bool:
        return (user_id, device_id) not in self.untrusted_devices

    async def cross_sign(self, data_dir: Path, password: str | None) -> None:
        self._check("cross_sign")
        self.cross_signed = True

    async def fetch_event(self, room_id: str, event_id: str) -> EventSource | None:
        self._check("fetch_event")
        return self.events.get(event_id)

    async def is_gone(self, room_id: str, event_id: str) -> bool:
        self._check("is_gone")
        source = self.events.get(event_id)
        if source is None:
            return True
        redacted = bool(source.get("unsigned", {}).get("redacted_because"))
        return redacted or source.get("sender") != self.user_id

    async def fetch_messages(
        self,
        room_id: str,
        start: str | None,
        end: str | None,
        limit: int,
        *,
        ask_keys: bool = False,
    ) -> MessagesPage:
        """Tokens are positions in the timeline: "t<n>" is before the n-th event."""
        self._check("fetch_messages")
        self.message_reads.append((room_id, start))
        timeline = self.timelines.get(room_id, [])
        top = int(start[1:]) if start else len(timeline)
        bottom = max(int(end[1:]) if end else 0, top - limit, 0)
        page = [self.events[event_id] for event_id in reversed(timeline[bottom:top])]
        return MessagesPage(page, f"t{bottom}" if page and bottom > 0 else None)

    async def messages_token_before(self, room_id: str, ts_ms: int) -> str | None:
        """Just before the event sent at `ts_ms` or soonest after (None: there is none),
        as /timestamp_to_event finds it."""
        self._check("messages_token_before")
        self.token_asks.append((room_id, ts_ms))
        sent = [
            int(self.events[event_id]["origin_server_ts"])
            for event_id in self.timelines.get(room_id, [])
        ]
        later = [(ts, index) for index, ts in enumerate(sent) if ts >= ts_ms]
        return f"t{min(later)[1]}" if later else None

    async def display_name(self) -> str | None:
        return self.display

    async def fetch_media(self, media: Media, max_bytes: int | None = None) -> bytes:
        self._check("fetch_media")
        if media.url not in self.media:
            raise MatrixError("downloading a file failed: M_NOT_FOUND")
        if max_bytes is not None and len(self.media[media.url]) > max_bytes:
            raise MediaTooLarge(max_bytes)
        return self.media[media.url]

    # Writes.

    async def send(
        self,
        room_id: str,
        content: dict[str, Any],
        *,
        sealed: bool = False,
        txn_id: str | None = None,
    ) -> str:
        self._check("send")
        self._fence("message", room_id, sealed)
        if txn_id is not None and txn_id in self._txns:
            return self._txns[txn_id]  # as Synapse does for the same access token
        event_id = self._new_id()
        source = {
            "type": "m.room.message",
            "sender": self.user_id,
            "content": content,
            "room_id": room_id,
            "event_id": event_id,
            "origin_server_ts": int(time.time() * 1000),
        }
        self._keep(room_id, source)
        self._note(Written("message", room_id, content, event_id, sealed))
        if txn_id is not None:
            self._txns[txn_id] = event_id
        return event_id

    async def send_file(
        self, room_id: str, name: str, data: bytes, mimetype: str, *, sealed: bool = False
    ) -> str:
        content = {
            "msgtype": "m.file",
            "body": name,
            "info": {"mimetype": mimetype, "size": len(data)},
            "data": data,
        }
        return await self.send(room_id, content, sealed=sealed)

    async def redact(self, room_id: str, event_id: str, reason: str) -> None:
        self._check("redact")
        self._fence("signal", room_id)
        if event_id in self.events:
            because = {"redacted_because": {"reason": reason}}
            self.events[event_id] = {**self.events[event_id], "content": {}, "unsigned": because}
        self._note(Written("redaction", room_id, {"reason": reason}, event_id))

    async def typing(self, room_id: str, active: bool) -> None:
        self._check("typing")
        self._fence("signal", room_id)
        self._note(Written("typing", room_id, {"active": active}))

    async def create_room(self, *, invite: list[str], direct: bool) -> RoomID:
        self._check("create_room")
        self._fence("room", "")
        if blocking := [user for user in invite if user in self.blocks_invites]:
            # As Synapse answers when an invitee's m.invite_permission_config blocks.
            raise InviteRefused(f"403 M_INVITE_BLOCKED inviting {blocking[0]}", blocked=True)
        room_id = f"!made{len(self._rooms) + 1}:fake.test"
        self.add_room(room_id, dict.fromkeys(invite, "invite"), encrypted=self._encryption_on)
        self._note(Written("room", room_id, {"invite": invite, "direct": direct}))
        return RoomID(room_id)

    async def join(self, room_id: str) -> bool:
        self._check("join")
        self._fence("room", room_id)
        if RoomID(room_id) not in self._rooms:
            self.add_room(room_id, [])
        self._note(Written("join", room_id))
        return True

    async def reject_invite(self, room_id: str, reason: str) -> None:
        self._check("reject_invite")
        self._fence("room", room_id)
        self._note(Written("leave", room_id, {"reason": reason}))

    async def maintain_keys(self) -> None:
        self._check("maintain_keys")

    async def close(self) -> None:
        return None


if TYPE_CHECKING:  # mypy's proof that the fake is an account
    _fake_is_an_account: MatrixAccount = FakeAccount()
