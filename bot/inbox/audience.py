"""Who reads each of the bot's rooms now: the account's room state (members, history
visibility, join rule, encryption) and, from the member events of the sync, since when
each person is a member.

The decisions are `core.rights.readers`; this module only gathers the facts.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.matrix.account import MatrixAccount
from bot.matrix.types import SyncBatch
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
MEMBER_EVENT = "m.room.member"


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
    def __init__(self, matrix: MatrixAccount, clock: Callable[[], float] = time.time) -> None:
        self.matrix = matrix
        # Epoch seconds now; tests move it on instead of waiting.
        self.clock = clock
        # room -> user -> (membership, epoch seconds it began)
        self._since: dict[str, dict[str, tuple[str, float]]] = {}
        # room -> its m.room.retention max_lifetime, in seconds
        self.retention: dict[str, float] = {}

    def observe(self, batch: SyncBatch) -> None:
        """Note when each membership began; a member event that keeps the membership (a
        new display name) keeps its start."""
        for room in batch.joined:
            known = self._since.setdefault(room.room_id, {})
            for event in (*room.state, *room.timeline):
                kind, user = event.get("type"), event.get("state_key")
                content = event.get("content")
                if kind == RETENTION:
                    self._note_retention(room.room_id, content)
                if kind != MEMBER_EVENT or not isinstance(user, str):
                    continue
                membership = content.get("membership") if isinstance(content, dict) else None
                if membership not in MEMBER:
                    known.pop(user, None)
                elif known.get(user, ("", 0.0))[0] != membership:
                    # A start the event does not give counts from now (hides more).
                    sent = event.get("origin_server_ts")
                    since = sent / 1000 if isinstance(sent, int) else self.clock()
                    known[user] = (str(membership), since)
        for room_id in batch.left:
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
        room = self.matrix.room(room_id)
        if room is None:
            return RoomMembers(RoomID(room_id))
        known = self._since.get(room_id, {})
        now = self.clock()
        joined: dict[UserID, float] = {}
        invited: dict[UserID, float] = {}
        for user_id, membership in room.members.items():
            if user_id == self.matrix.user_id:
                continue
            since = known.get(user_id, ("", now))[1]
            (invited if membership == "invite" else joined)[user_id] = since
        lifetime = self.retention.get(room_id)
        return RoomMembers(
            RoomID(room_id),
            joined,
            invited,
            room.history_visibility,
            room.join_rule,
            kept_since=now - lifetime if lifetime else -math.inf,
            encrypted=room.encrypted,
        )

    def of_room(self, room_id: str) -> RoomAudience:
        """Who reads the room now, and which rooms' knowledge they may all get."""
        own = self.members(room_id)
        readers = decide_readers(own)
        others = [
            self.members(other)
            for other, room in self.matrix.rooms().items()
            if other != room_id and readers <= room.members.keys()
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
