"""Why a file someone replies to is not in the bot's knowledge, when the bot keeps no
record of it: files are off here, it was shared before they were on (or before the bot
joined), or it is of a kind the bot does not read. Without this, a question replying to
such a file got "I found nothing about this", as if the file had nothing to say."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.inbox.events import SHARED_FILE_MSGTYPES
from core import strings
from core.knowledge.parse.extraction import decide_file_kind


def decide_missing_file_reason(content: Mapping[str, Any], files_kept: bool) -> str | None:
    """What to tell someone who replies to this message about a file the bot holds no
    record of; None when the message shares no file."""
    if content.get("msgtype") not in SHARED_FILE_MSGTYPES:
        return None
    name = str(content.get("filename") or content.get("body") or "").strip() or "?"
    if not files_kept:
        return strings.FILE_NOT_KEPT_HERE.format(name=name)
    info = content.get("info")
    media_type = str(info.get("mimetype", "")) if isinstance(info, Mapping) else ""
    if (
        content.get("msgtype") not in ("m.file", "m.image")
        or decide_file_kind(name, media_type) is None
    ):
        return strings.FILE_UNREADABLE.format(name=name, reason=strings.FILE_KIND_UNREAD)
    return strings.FILE_SHARED_EARLIER.format(name=name)
