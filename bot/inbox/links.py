"""Links to Matrix rooms and events that every client opens."""

from __future__ import annotations

from urllib.parse import quote


def build_room_link(room_id: str, via: str, label: str | None = None) -> str:
    """A matrix.to link to a room, in Markdown. Clients show it as the room's name to a
    reader who may see the room, and as its id to others, so the bot itself never
    writes a room's name where readers of other rooms see it; `label` is a text that
    says no more than the sentence around it ("open it"), for clients that show links
    as they are written."""
    server = via.split(":", 1)[1] if ":" in via else via
    url = f"https://matrix.to/#/{quote(room_id, safe='')}?via={quote(server, safe='')}"
    return f"[{label or room_id}]({url})"


def build_permalink(room_id: str, event_id: str, via: str) -> str:
    """A matrix.to link to an event. `via` is a user in the room (the message's sender):
    their server is one that can serve the room to someone who follows the link (room
    ids of version 12 name no server of their own)."""
    server = via.split(":", 1)[1] if ":" in via else via
    room, event = quote(room_id, safe=""), quote(event_id, safe="")
    return f"https://matrix.to/#/{room}/{event}?via={quote(server, safe='')}"
