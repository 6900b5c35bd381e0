"""Is the bot mentioned, across client styles, and the question without the mention."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from bot.inbox.events import IncomingMessage

PILL_HREF = re.compile(r"""href\s*=\s*["']https://matrix\.to/#/([^"'?]+)""", re.IGNORECASE)
REPLY_FALLBACK = re.compile(r"\A(?:>[^\n]*\n)+\n?")


@dataclass(frozen=True)
class BotIdentity:
    user_id: str
    display_name: str | None = None

    def names(self) -> list[str]:
        return [self.user_id] + ([self.display_name] if self.display_name else [])


def _word(name: str) -> str:
    """A pattern for `name` as a whole word; a user id must not run on into a longer one."""
    if name.startswith("@"):
        return rf"(?<![\w@]){re.escape(name)}(?![\w-]|[.:]\w)"
    return rf"(?<![\w@]){re.escape(name)}(?!\w)"


def is_mentioned(message: IncomingMessage, bot: BotIdentity) -> bool:
    """`m.mentions` decides when the client sent it; otherwise the body and pills do.

    Clients that send `m.mentions` also put names in the body (replies quote them, people
    write them in passing), so the body fallback applies only when the field is absent.
    """
    if message.mentions.present:
        return bot.user_id in message.mentions.user_ids
    if message.formatted_body and any(
        unquote(target) == bot.user_id for target in PILL_HREF.findall(message.formatted_body)
    ):
        return True
    body = strip_reply_fallback(message.body)
    return any(re.search(_word(name), body, re.IGNORECASE) for name in bot.names())


def strip_reply_fallback(body: str) -> str:
    """Drop the `> quoted` lines that older clients prepend to a reply."""
    return REPLY_FALLBACK.sub("", body, count=1)


def strip_mention(body: str, bot: BotIdentity) -> str:
    """The message without reply quotes, the bot's user id, and a leading `Name:`."""
    text = strip_reply_fallback(body)
    text = re.sub(_word(bot.user_id) + r"[:,]?", " ", text, flags=re.IGNORECASE)
    if bot.display_name:
        text = re.sub(
            r"\A\s*" + _word(bot.display_name) + r"\s*[:,]?", " ", text, flags=re.IGNORECASE
        )
    return re.sub(r"[ \t]{2,}", " ", text).strip()
