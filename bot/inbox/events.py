"""Matrix message events as plain values that the pure decision code can read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.matrix.types import Media
from core.ids import EventID, RoomID, UserID

FILE_MSGTYPES = frozenset({"m.file", "m.audio", "m.image"})


# The messages that share a file a person could ask about.
SHARED_FILE_MSGTYPES = frozenset({"m.file", "m.image", "m.video"})


@dataclass(frozen=True)
class Mentions:
    """The event's `m.mentions`; `present` is False for clients that do not send it."""

    present: bool = False
    user_ids: frozenset[str] = frozenset()
    room: bool = False


@dataclass(frozen=True)
class SharedFile:
    """The file of an `m.file` (or `m.audio`, `m.image`) message."""

    name: str
    media_type: str
    # As the sender's client says; None when it does not.
    size: int | None
    media: Media
    # MSC3245: a voice message, not a recording shared as a file.
    voice: bool = False


@dataclass(frozen=True)
class IncomingMessage:
    event_id: EventID
    room_id: RoomID
    sender: UserID
    timestamp_ms: int
    msgtype: str
    body: str
    formatted_body: str | None = None
    mentions: Mentions = Mentions()
    thread_root: EventID | None = None
    reply_to: EventID | None = None
    is_edit: bool = False
    # For an edit: the message it replaces. Its body and formatted body are the new
    # content's; its mentions are the edit's own, which name only the newly mentioned.
    replaces: EventID | None = None
    file: SharedFile | None = None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def parse_mentions(content: Mapping[str, Any]) -> Mentions:
    if "m.mentions" not in content:
        return Mentions()
    raw = _mapping(content["m.mentions"])
    user_ids = raw.get("user_ids")
    return Mentions(
        present=True,
        user_ids=frozenset(u for u in user_ids if isinstance(u, str))
        if isinstance(user_ids, list)
        else frozenset(),
        room=raw.get("room") is True,
    )


def parse_message(source: Mapping[str, Any], room_id: RoomID) -> IncomingMessage | None:
    """Read an `m.room.message` event (decrypted already); None for anything else."""
    if source.get("type") != "m.room.message":
        return None
    content = _mapping(source.get("content"))
    relation = _mapping(content.get("m.relates_to"))
    is_edit = relation.get("rel_type") == "m.replace"
    replaces = relation.get("event_id") if is_edit else None
    if is_edit and isinstance(content.get("m.new_content"), Mapping):
        # Read the new content, with the edit's own mentions: those name only the people
        # the edit newly mentions, so an edit that adds the bot's mention addresses it.
        edited = {k: v for k, v in content["m.new_content"].items() if k != "m.mentions"}
        if "m.mentions" in content:
            edited["m.mentions"] = content["m.mentions"]
        content = edited
    is_thread = relation.get("rel_type") == "m.thread"
    reply_to = _mapping(relation.get("m.in_reply_to")).get("event_id")
    formatted = (
        content.get("formatted_body") if content.get("format") == "org.matrix.custom.html" else None
    )
    return IncomingMessage(
        event_id=EventID(str(source.get("event_id", ""))),
        room_id=room_id,
        sender=UserID(str(source.get("sender", ""))),
        timestamp_ms=int(source.get("origin_server_ts") or 0),
        msgtype=str(content.get("msgtype", "")),
        body=body if isinstance(body := content.get("body"), str) else "",
        formatted_body=formatted if isinstance(formatted, str) else None,
        mentions=parse_mentions(content),
        thread_root=EventID(relation["event_id"]) if is_thread and "event_id" in relation else None,
        # In a thread, `m.in_reply_to` with `is_falling_back` only points at the latest
        # message for clients without threads; it is not a reply the user chose.
        reply_to=EventID(reply_to)
        if isinstance(reply_to, str) and not (is_thread and relation.get("is_falling_back"))
        else None,
        is_edit=is_edit,
        replaces=EventID(replaces) if isinstance(replaces, str) else None,
        file=parse_shared_file(content),
    )


def parse_shared_file(content: Mapping[str, Any]) -> SharedFile | None:
    """The file of a file or audio message: in the clear (`url`), or encrypted (`file`,
    with its key); None for other messages or a file without a usable URL."""
    if content.get("msgtype") not in FILE_MSGTYPES:
        return None
    info = _mapping(content.get("info"))
    encrypted = _mapping(content.get("file"))
    if encrypted:
        url, key = encrypted.get("url"), _mapping(encrypted.get("key")).get("k")
        iv, sha256 = encrypted.get("iv"), _mapping(encrypted.get("hashes")).get("sha256")
        if not (
            isinstance(url, str)
            and isinstance(key, str)
            and isinstance(iv, str)
            and isinstance(sha256, str)
        ):
            return None
        media = Media(url, key, iv, sha256)
    elif isinstance(content.get("url"), str):
        media = Media(content["url"])
    else:
        return None
    if not media.url.startswith("mxc://"):
        return None
    name = content.get("filename") or content.get("body")
    size = info.get("size")
    return SharedFile(
        name=" ".join(name.split())[:255] if isinstance(name, str) and name.strip() else "file",
        media_type=mime if isinstance(mime := info.get("mimetype"), str) else "",
        size=size if isinstance(size, int) and size >= 0 else None,
        media=media,
        voice="org.matrix.msc3245.voice" in content,
    )


def parse_latest_edit(source: Mapping[str, Any]) -> str | None:
    """The body of a message's latest edit by its own sender, as the homeserver bundles
    it with the message (`unsigned.m.relations.m.replace`); None when it has none."""
    relations = _mapping(_mapping(source.get("unsigned")).get("m.relations"))
    edit = _mapping(relations.get("m.replace"))
    if not edit or edit.get("sender") != source.get("sender"):
        return None
    body = _mapping(_mapping(edit.get("content")).get("m.new_content")).get("body")
    return body if isinstance(body, str) else None


@dataclass(frozen=True)
class Reaction:
    event_id: EventID
    sender: UserID
    target: EventID
    key: str
    timestamp_ms: int


@dataclass(frozen=True)
class Redaction:
    event_id: EventID
    sender: UserID
    redacts: EventID


def parse_reaction(source: Mapping[str, Any]) -> Reaction | None:
    """An `m.reaction` annotation; None for anything else."""
    if source.get("type") != "m.reaction":
        return None
    relation = _mapping(_mapping(source.get("content")).get("m.relates_to"))
    target, key = relation.get("event_id"), relation.get("key")
    if relation.get("rel_type") != "m.annotation" or not isinstance(target, str):
        return None
    return Reaction(
        EventID(str(source.get("event_id", ""))),
        UserID(str(source.get("sender", ""))),
        EventID(target),
        key if isinstance(key, str) else "",
        int(source.get("origin_server_ts") or 0),
    )


def parse_redaction(source: Mapping[str, Any]) -> Redaction | None:
    """An `m.room.redaction`; the redacted event is at the top level before room version
    11 and in the content since."""
    if source.get("type") != "m.room.redaction":
        return None
    redacts = source.get("redacts") or _mapping(source.get("content")).get("redacts")
    if not isinstance(redacts, str):
        return None
    return Redaction(
        EventID(str(source.get("event_id", ""))),
        UserID(str(source.get("sender", ""))),
        EventID(redacts),
    )
