"""Links to Matrix rooms and events that every client opens."""

from __future__ import annotations

from urllib.parse import quote


def build_permalink(room_id: str, event_id: str) -> str:
    return f"https://matrix.to/#/{quote(room_id, safe='')}/{quote(event_id, safe='')}"
