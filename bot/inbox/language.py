"""The language of a reply: the room's `language`, else the asker's as detected in the
message, else none (the bot speaks English and the model answers in the question's)."""

from __future__ import annotations

import logging

from bot.inbox.mentions import strip_reply_fallback
from bot.settings_holder import SettingsHolder
from core.i18n.detection import LanguageFinder
from core.ids import RoomID

log = logging.getLogger(__name__)


# Messages whose body is what the person wrote (an audio or file message's body is its
# file name, which says nothing of the person's language).
WRITTEN = frozenset({"m.text", "m.notice", "m.emote"})


def build_detection_text(body: str, prefix: str) -> str:
    """What of a message tells its language: what the person wrote, not the quote of
    the message it replies to; a command's arguments, not its name (`!catchup desde el
    lunes` is Spanish, `!help` is no language)."""
    stripped = strip_reply_fallback(body).strip()
    if stripped.startswith(prefix):
        return stripped.partition(" ")[2]
    return stripped


class ReplyLanguages:
    def __init__(self, settings: SettingsHolder, finder: LanguageFinder | None) -> None:
        self.settings = settings
        self.finder = finder

    def of_room(self, room_id: RoomID | str) -> str | None:
        """The room's configured language; None when it has none."""
        return self.settings.current.room(room_id).language

    async def of_message(
        self, room_id: RoomID | str, body: str, msgtype: str = "m.text"
    ) -> str | None:
        """The language to reply to a message in (None when neither the room nor the
        message says; a failing detector says nothing either)."""
        configured = self.of_room(room_id)
        if configured is not None or self.finder is None or msgtype not in WRITTEN:
            return configured
        prefix = self.settings.current.bot.command_prefix
        try:
            return await self.finder.detect(build_detection_text(body, prefix))
        except Exception:  # a reply in English is better than none
            log.exception("the language of a message could not be detected")
            return None
