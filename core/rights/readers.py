"""Who reads an answer, and who each reader is in a source application. Pure decisions.

Two notions, kept apart on purpose:
- the *readers* of a room: everyone who can read what the bot posts there now or once
  they accept an invite (their rights bound which documents may be used);
- the *members for a room's own knowledge* (summaries, memories, history windows, earlier
  answers): joined members only, and where the room's history visibility is `joined`
  or `invited`, only what was said since they became members.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from core.config.rights import ReaderMapping
from core.ids import RoomID, UserID, localpart_of, server_of

# History visibilities under which a member sees only what was said while a member.
SINCE_MEMBERSHIP = frozenset({"joined", "invited"})
# Join rules that need an invitation; any other (public, restricted, ...) lets people in
# that the bot cannot enumerate.
BY_INVITATION = frozenset({"invite", "knock", "private"})
ALWAYS = -math.inf


@dataclass(frozen=True)
class RoomMembers:
    """A room as the homeserver shows it now; `since` values are epoch seconds at which
    each person's current membership began (the latest member event known: a later
    value than the truth only ever hides more)."""

    room: RoomID
    joined: Mapping[UserID, float] = field(default_factory=dict)
    invited: Mapping[UserID, float] = field(default_factory=dict)
    history_visibility: str = "shared"
    join_rule: str = "invite"
    # The room's `m.room.retention`: what was said before this time is not kept, and the
    # bot reuses none of it (history, summaries, memories).
    kept_since: float = -math.inf
    # End-to-end encrypted (`m.room.encryption`): the homeserver cannot read what is said
    # there, so none of it may be posted where the homeserver can read it.
    encrypted: bool = False


def decide_readers(room: RoomMembers) -> frozenset[UserID]:
    """Everyone who can read what the bot posts now: joined members, and invited ones
    who will read it once they join (all but `joined` visibility lets them; an unknown
    visibility counts them too: fail closed)."""
    if room.history_visibility == "joined":
        return frozenset(room.joined)
    return frozenset(room.joined) | frozenset(room.invited)


def decide_open(room: RoomMembers) -> bool:
    """Anyone may come and read what is posted: world-readable history, or a room people
    join without an invitation whose history newcomers can scroll back to."""
    if room.history_visibility == "world_readable":
        return True
    return room.join_rule not in BY_INVITATION and room.history_visibility not in SINCE_MEMBERSHIP


def decide_knowledge_since(
    room: RoomMembers, readers: Iterable[UserID], *, own_room: bool
) -> float | None:
    """From when the room's discussion is readable by every one of `readers`: `ALWAYS`,
    a time, or None when some reader may not have the room's knowledge at all.

    In another room, every reader must be a joined member. In the room itself, an
    invited reader counts as the visibility lets them read once they join.
    """
    members = dict(room.joined)
    if own_room and room.history_visibility != "joined":
        members = {**room.invited, **members}
    since = ALWAYS
    for reader in readers:
        if reader not in members:
            return None
        if room.history_visibility in SINCE_MEMBERSHIP:
            since = max(since, members[reader])
    return max(since, room.kept_since)


def decide_room_knowledge(
    own: RoomMembers, readers: frozenset[UserID], others: Iterable[RoomMembers]
) -> tuple[tuple[RoomID, float], ...]:
    """The rooms whose own knowledge every reader may get, with the time from which:
    the room itself first, then the bot's other rooms where all readers are members."""
    found = []
    for room, own_room in ((own, True), *((o, False) for o in others if o.room != own.room)):
        since = decide_knowledge_since(room, readers, own_room=own_room)
        if since is not None:
            found.append((room.room, since))
    return tuple(found)


def decide_plaintext_only(own: RoomMembers, rooms: Iterable[RoomMembers]) -> tuple[RoomID, ...]:
    """The rooms whose knowledge may reach `own` only as far as it was written while they
    were not encrypted: every encrypted room, when `own` is not (the homeserver reads
    what is posted there; fail closed). Encryption once on stays on in Matrix, so a
    room's own knowledge may always go back into it."""
    if own.encrypted:
        return ()
    return tuple(room.room for room in rooms if room.encrypted and room.room != own.room)


def decide_audience_holds(computed: frozenset[UserID], now: frozenset[UserID]) -> bool:
    """Whether text computed for `computed` readers may be posted to the room's readers
    `now`: people who left change nothing, anyone new does."""
    return now <= computed


@dataclass(frozen=True)
class Audience:
    """The people whose rights bound an answer, and the rooms whose own knowledge they
    may all get (with the time from which). No readers means public documents only."""

    readers: tuple[UserID, ...]
    rooms: tuple[tuple[RoomID, float], ...]
    reason: str
    # Of `rooms`, those whose knowledge counts only where written while they were not
    # encrypted (see `decide_plaintext_only`).
    plaintext_only: tuple[RoomID, ...] = ()

    @property
    def public_only(self) -> bool:
        return not self.readers

    def knowledge_since(self, room: RoomID) -> float | None:
        """From when the room's own knowledge may be used; None: not at all."""
        return next((since for name, since in self.rooms if name == room), None)


def decide_audience(
    asker: UserID,
    readers: tuple[UserID, ...],
    *,
    is_direct: bool,
    room_public_only: bool,
    open_room: bool,
    max_members: int,
    rooms: tuple[tuple[RoomID, float], ...],
    plaintext_only: tuple[RoomID, ...] = (),
) -> Audience:
    """Everyone who reads the answer, so everyone's rights count.

    `readers` are the room's readers except the bot (see `decide_readers`); `rooms`
    those whose own knowledge they may all get (see `decide_room_knowledge`), and of
    them `plaintext_only` those encrypted while the answer's room is not.
    """
    if room_public_only:
        readers, reason = (), "the room is set to public documents only"
    elif open_room:
        readers, reason = (), "anyone may join and read the room: public documents only"
    elif is_direct:
        readers, reason = (asker,), "a direct chat: the asker's rights"
    else:
        everyone = tuple(dict.fromkeys((asker, *readers)))
        if len(everyone) > max_members:
            readers, reason = (), f"more than {max_members} readers: public documents only"
        else:
            readers, reason = everyone, "every reader's rights"
    return Audience(readers, rooms, reason, plaintext_only)


def map_reader(user_id: UserID, mapping: ReaderMapping) -> str | None:
    """The reader's identity in a source application, or None when it has none."""
    if user_id in mapping.users:
        return mapping.users[user_id]
    if mapping.rule == "matrix_id":
        return user_id
    if mapping.rule == "localpart" and server_of(user_id) == mapping.homeserver:
        return localpart_of(user_id)
    return None
