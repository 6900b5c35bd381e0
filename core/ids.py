"""Identifiers as distinct types, so a room id is never passed where a user id belongs.

Room ids are opaque: room version 12 ids have no `:server` part, so never parse them.
"""

from typing import NewType

RoomID = NewType("RoomID", str)
UserID = NewType("UserID", str)
EventID = NewType("EventID", str)
AnswerID = NewType("AnswerID", str)


def server_of(user_id: UserID) -> str:
    """The server name of a user id: `@alice:example.org` -> `example.org`."""
    _, _, server = user_id.partition(":")
    return server


def localpart_of(user_id: UserID) -> str:
    """The localpart of a user id: `@alice:example.org` -> `alice`."""
    return user_id.removeprefix("@").partition(":")[0]
