"""The language of a reply: the room's `language`, else the asker's as detected in the
message, else none (the bot speaks English and the model answers in the question's)."""

from __future__ import annotations

from bot.settings_holder import SettingsHolder
from core.i18n.detection import LanguageFinder
from core.ids import RoomID


def build_detection_text(body: str, prefix: str) -> str:
    """What of a message tells its language: a command's arguments, not its name
    (`!catchup desde el lunes` is Spanish, `!help` is no language)."""
    stripped = body.strip()
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

    async def of_message(self, room_id: RoomID | str, body: str) -> str | None:
        """The language to reply to a message in."""
        configured = self.of_room(room_id)
        if configured is not None or self.finder is None:
            return configured
        prefix = self.settings.current.bot.command_prefix
        return await self.finder.detect(build_detection_text(body, prefix))
