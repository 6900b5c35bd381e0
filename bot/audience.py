"""Who reads each of the bot's rooms now: nio's room state (members, history visibility,
join rule) and, from the member events of the sync, since when each person is a member.

The decisions are `core.rights.readers`; this module only gathers the facts.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from nio import RoomMemberEvent, SyncResponse, UnknownEvent

from bot.matrix import MatrixIO
from core.ids import RoomID, UserID
from core.rights.readers import (
    RoomMembers,
    decide_audience_holds,
    decide_knowledge_since,
    decide_open,
    decide_plaintext_only,
    decide_readers,
    decide_room_knowledge,
)

MEMBER = ("join", "invite")
RETENTION = "m.room.retention"


class AudienceChanged(Exception):
    """New readers came into the room while an answer for the earlier ones was written."""


@dataclass(frozen=True)
class RoomAudience:
    """The readers of a room when a reply was computed, and what they may get."""

    room: RoomID
    readers: frozenset[UserID]
    open_room: bool
    knowledge: tuple[tuple[RoomID, float], ...]
    # Of `knowledge`, the encrypted rooms while this one is not (see core/rights/readers).
    plaintext_only: tuple[RoomID, ...] = ()

    def own_since(self) -> float | None:
        """From when the room's own lines may be reused for these readers; None: never."""
        return next((since for room, since in self.knowledge if room == self.room), None)


class Audiences:
    def __init__(self, matrix: MatrixIO) -> None:
        self.matrix = matrix
        # room -> user -> (membership, epoch seconds it began)
        self._since: dict[str, dict[str, tuple[str, float]]] = {}
        # room -> its m.room.retention max_lifetime, in seconds
        self.retention: dict[str, float] = {}

    def observe(self, response: SyncResponse) -> None:
        """Note when each membership began; a member event that keeps the membership (a
        new display name) keeps its start."""
        for room_id, info in response.rooms.join.items():
            known = self._since.setdefault(room_id, {})
            for event in (*info.state, *info.timeline.events):
                if isinstance(event, UnknownEvent) and event.type == RETENTION:
                    self._note_retention(room_id, event.source.get("content"))
                if not isinstance(event, RoomMemberEvent):
                    continue
                if event.membership not in MEMBER:
                    known.pop(event.state_key, None)
                elif known.get(event.state_key, ("", 0.0))[0] != event.membership:
                    known[event.state_key] = (event.membership, event.server_timestamp / 1000)
        for room_id in response.rooms.leave:
            self._since.pop(room_id, None)
            self.retention.pop(room_id, None)

    def _note_retention(self, room_id: str, content: object) -> None:
        lifetime = content.get("max_lifetime") if isinstance(content, dict) else None
        if isinstance(lifetime, int) and lifetime > 0:
            self.retention[room_id] = lifetime / 1000
        else:
            self.retention.pop(room_id, None)

    def members(self, room_id: str) -> RoomMembers:
        """The room now; a membership of unknown start counts from now (hides more)."""
        room = self.matrix.client.rooms.get(room_id)
        if room is None:
            return RoomMembers(RoomID(room_id))
        known = self._since.get(room_id, {})
        now = time.time()
        joined: dict[UserID, float] = {}
        invited: dict[UserID, float] = {}
        for user_id, user in room.users.items():
            if user_id == self.matrix.user_id:
                continue
            since = known.get(user_id, ("", now))[1]
            (invited if user.invited else joined)[UserID(user_id)] = since
        lifetime = self.retention.get(room_id)
        return RoomMembers(
            RoomID(room_id), joined, invited, room.history_visibility, room.join_rule,
            kept_since=now - lifetime if lifetime else -math.inf, encrypted=room.encrypted,
        )  # fmt: skip

    def of_room(self, room_id: str) -> RoomAudience:
        """Who reads the room now, and which rooms' knowledge they may all get."""
        own = self.members(room_id)
        readers = decide_readers(own)
        others = [
            self.members(other)
            for other, room in self.matrix.client.rooms.items()
            if other != room_id and readers <= room.users.keys()
        ]
        knowledge = decide_room_knowledge(own, readers, others)
        return RoomAudience(
            own.room, readers, decide_open(own), knowledge, decide_plaintext_only(own, others)
        )

    def own_since(self, room_id: str) -> float | None:
        """From when the room's own discussion is readable by all who read it now."""
        room = self.members(room_id)
        return decide_knowledge_since(room, decide_readers(room), own_room=True)

    def holds(self, audience: RoomAudience) -> bool:
        """Whether text computed for `audience` may still be posted in its room."""
        now = self.members(audience.room)
        return decide_audience_holds(audience.readers, decide_readers(now)) and (
            audience.open_room or not decide_open(now)
        )
