"""The language of a reply: the room's `language`, else the asker's as detected in the
message, else the language the room was last written in (a short or mixed question,
"Que signifie l'erreur VPN WG-503 ?", tells too little alone), else none (the bot speaks
English and the model answers in the question's). A question in a script the detector
does not know (Cyrillic, Chinese…) is clear too: none, and the room's recent language is
forgotten (a Russian question got the Spanish of the question before it, and so did the
English one after)."""

from __future__ import annotations

import logging
from collections import OrderedDict

from bot.inbox.mentions import BotIdentity, strip_mention, strip_reply_fallback
from bot.settings_holder import SettingsHolder
from core.i18n.detection import LanguageFinder
from core.i18n.scripts import decide_script
from core.ids import RoomID

log = logging.getLogger(__name__)


# Messages whose body is what the person wrote (an audio or file message's body is its
# file name, which says nothing of the person's language).
WRITTEN = frozenset({"m.text", "m.notice", "m.emote"})
# Rooms whose last language is remembered (the least recently written go first).
REMEMBERED_ROOMS = 10_000


def build_detection_text(body: str, prefix: str, bot: BotIdentity | None = None) -> str:
    """What of a message tells its language: what the person wrote, not the quote of
    the message it replies to, nor the bot's name they addressed it by; a
    command's arguments, not its name (`!catchup desde el lunes` is Spanish, `!help` is
    no language)."""
    stripped = strip_mention(body, bot) if bot else strip_reply_fallback(body).strip()
    if stripped.startswith(prefix):
        stripped = stripped.partition(" ")[2]
    return stripped


def decide_reply_language(
    configured: str | None, detected: str | None, recent: str | None
) -> str | None:
    """The room's language when set; else the message's; else the room's recent one."""
    return configured or detected or recent


class ReplyLanguages:
    def __init__(
        self,
        settings: SettingsHolder,
        finder: LanguageFinder | None,
        bot: BotIdentity | None = None,
    ) -> None:
        self.settings = settings
        self.finder = finder
        self.bot = bot
        # The last language a question to the bot was clearly written in, per room (in
        # memory: after a restart the next clear message says it again).
        self._recent: OrderedDict[str, str] = OrderedDict()

    def of_room(self, room_id: RoomID | str) -> str | None:
        """The room's configured language; None when it has none."""
        return self.settings.current.room(room_id).language

    async def of_message(
        self, room_id: RoomID | str, body: str, msgtype: str = "m.text"
    ) -> str | None:
        """The language to reply to a message in (None when neither the room, the
        message nor the room's recent messages say; a failing detector says nothing)."""
        configured = self.of_room(room_id)
        if configured is not None or self.finder is None or msgtype not in WRITTEN:
            return configured
        prefix = self.settings.current.bot.command_prefix
        text = build_detection_text(body, prefix, self.bot)
        if decide_script(text) not in (None, "LATIN"):
            self._recent.pop(str(room_id), None)
            return None
        try:
            detected = await self.finder.detect(text)
        except Exception:  # a reply in English is better than none
            log.exception("the language of a message could not be detected")
            detected = None
        return decide_reply_language(None, detected, self._remember(str(room_id), detected))

    def _remember(self, room_id: str, detected: str | None) -> str | None:
        """Keep a clear detection; the room's recent language either way."""
        if detected is not None:
            self._recent[room_id] = detected
            self._recent.move_to_end(room_id)
            while len(self._recent) > REMEMBERED_ROOMS:
                self._recent.popitem(last=False)
        return self._recent.get(room_id)
