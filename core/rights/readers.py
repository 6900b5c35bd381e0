"""Who reads an answer, and who each reader is in a source application. Pure decisions."""

from __future__ import annotations

from dataclasses import dataclass

from core.config.rights import ReaderMapping
from core.ids import RoomID, UserID, localpart_of, server_of


@dataclass(frozen=True)
class Audience:
    """The people whose rights bound an answer. No readers means public documents only."""

    readers: tuple[UserID, ...]
    rooms: tuple[RoomID, ...]
    reason: str

    @property
    def public_only(self) -> bool:
        return not self.readers


def decide_audience(
    asker: UserID,
    members: tuple[UserID, ...],
    *,
    is_direct: bool,
    room_public_only: bool,
    max_members: int,
    shared_rooms: tuple[RoomID, ...],
) -> Audience:
    """Everyone in the room reads the answer, so everyone's rights count.

    `members` are the room's joined members except the bot; `shared_rooms` the rooms
    all of them are in, whose own documents (summaries, memories) they may get.
    """
    if room_public_only:
        return Audience((), shared_rooms, "the room is set to public documents only")
    if is_direct:
        return Audience((asker,), shared_rooms, "a direct chat: the asker's rights")
    readers = tuple(dict.fromkeys((asker, *members)))
    if len(readers) > max_members:
        return Audience((), shared_rooms, f"more than {max_members} members: public documents only")
    return Audience(readers, shared_rooms, "every member's rights")


def map_reader(user_id: UserID, mapping: ReaderMapping) -> str | None:
    """The reader's identity in a source application, or None when it has none."""
    if user_id in mapping.users:
        return mapping.users[user_id]
    if mapping.rule == "matrix_id":
        return user_id
    if mapping.rule == "localpart" and server_of(user_id) == mapping.homeserver:
        return localpart_of(user_id)
    return None
