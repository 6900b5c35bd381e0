"""A text message's content as a Matrix client sends it: mentions, a thread (with the
reply fallback for clients without threads) or a reply. Used by the people of the
Synapse tests (tests/e2e/people.py) and of the fake account's (tests/bot/scenes.py)."""

from __future__ import annotations

from typing import Any


def build_text_content(
    body: str,
    *,
    mentions: list[str] | None = None,
    thread: str | None = None,
    reply_to: str | None = None,
    msgtype: str = "m.text",
) -> dict[str, Any]:
    """`mentions=None` leaves out `m.mentions` (as clients that predate it do)."""
    content: dict[str, Any] = {"msgtype": msgtype, "body": body}
    if mentions is not None:
        content["m.mentions"] = {"user_ids": mentions}
    if thread:
        content["m.relates_to"] = {
            "rel_type": "m.thread",
            "event_id": thread,
            "is_falling_back": reply_to is None,
            "m.in_reply_to": {"event_id": reply_to or thread},
        }
    elif reply_to:
        content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
    return content
