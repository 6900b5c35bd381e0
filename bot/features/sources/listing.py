"""`!sources`: what the bot answers from in a room (pure). The document collections the
room's readers may all be answered from, and the room's own knowledge: its shared files,
its summaries, its discussion."""

from __future__ import annotations

from collections import Counter

from core import strings
from core.config import Settings
from core.ids import RoomID, UserID
from core.rights.readers import decide_audience


def build_sources_reply(
    settings: Settings,
    room_id: RoomID,
    asker: UserID,
    readers: tuple[UserID, ...],
    *,
    is_direct: bool,
    open_room: bool,
) -> str:
    """The reply to `!sources` in `room_id`, for the readers the answer would have: the
    collections listed are those a question asked here searches (rights are checked per
    document with each source application when it is asked)."""
    room = settings.room(room_id)
    audience = decide_audience(
        asker,
        readers,
        is_direct=is_direct,
        room_public_only=room.public_only,
        open_room=open_room,
        max_members=settings.rights.max_room_members,
        rooms=(),
    )
    # The rooms' own collections are listed as the room's, not as documents.
    own = {settings.room_files_collection(), settings.summaries.collection} - {None}
    lines = [strings.SOURCES_HEADER]
    # Restricted collections are counted per source application, not named: their names
    # and descriptions are the admins' words about documents some readers may not open.
    restricted = Counter[str]()
    for name, collection in sorted(settings.collections.items()):
        if name in own:
            continue
        if not collection.public:
            restricted[collection.source] += 0 if audience.public_only else 1
            continue
        about = f": {collection.description}" if collection.description else ""
        lines.append(strings.SOURCES_PUBLIC.format(name=name, about=about))
    for source, count in sorted(restricted.items()):
        if count:
            lines.append(strings.SOURCES_RESTRICTED.format(source=source, count=count))
    if len(lines) == 1:
        lines.append(strings.SOURCES_NONE)
    if audience.public_only:
        lines.append(strings.SOURCES_PUBLIC_ONLY)
    if settings.room_files_collection() is not None:
        lines.append(strings.SOURCES_ROOM_FILES)
    if settings.summaries.collection:
        lines.append(strings.SOURCES_ROOM_SUMMARIES)
    if room.history:
        lines.append(strings.SOURCES_ROOM_HISTORY)
    return "\n".join(lines)
