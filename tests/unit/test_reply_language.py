"""The language the bot replies in (bot/inbox/language.py): the bot's name and codes
do not tip a short question into English, and an unclear one takes the room's recent
language."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.inbox.language import ReplyLanguages, build_detection_text, decide_reply_language
from bot.inbox.mentions import BotIdentity
from bot.settings_holder import SettingsHolder
from core.config import parse_config
from core.i18n.detection import LanguageFinder

BOT = BotIdentity("@knowledge-bot:localhost", "Knowledge Bot")


def test_the_detection_text_leaves_out_the_bots_name():
    text = build_detection_text("Knowledge Bot: Que signifie l'erreur VPN WG-503 ?", "!", BOT)
    assert text == "Que signifie l'erreur VPN WG-503 ?"
    assert build_detection_text("!catchup desde el lunes", "!", BOT) == "desde el lunes"


@pytest.mark.parametrize(
    "configured,detected,recent,expected",
    [
        ("de", "fr", "es", "de"),
        (None, "fr", "es", "fr"),
        (None, None, "es", "es"),
        (None, None, None, None),
    ],
)
def test_decide_reply_language(configured, detected, recent, expected):
    assert decide_reply_language(configured, detected, recent) == expected


@pytest.fixture(scope="module")
def finder() -> LanguageFinder:
    return LanguageFinder()


def languages(finder: LanguageFinder, room_toml: str = "") -> ReplyLanguages:
    settings = parse_config(
        '[matrix]\nhomeserver = "http://127.0.0.1:1"\nuser_id = "@knowledge-bot:localhost"\n'
        'password = "p"\n' + room_toml,
        origin="test",
        env={},
        base_dir=Path("."),
    )
    return ReplyLanguages(SettingsHolder(settings), finder, BOT)


async def test_short_mixed_questions_are_answered_in_their_language(finder):
    replies = languages(finder)
    asked = {
        "Knowledge Bot: Que signifie l'erreur VPN WG-503 ?": "fr",
        "Knowledge Bot: was bedeutet WG-503?": "de",
        "@knowledge-bot:localhost what does WG-503 mean?": "en",
    }
    for n, (body, expected) in enumerate(asked.items()):
        assert await replies.of_message(f"!room{n}:localhost", body) == expected, body


async def test_an_unclear_question_takes_the_rooms_recent_language(finder):
    replies = languages(finder)
    room = "!a:localhost"
    assert await replies.of_message(room, "Knowledge Bot: Hotel Paris?") is None
    assert await replies.of_message(room, "Wie viele Urlaubstage bekomme ich im Jahr?") == "de"
    assert await replies.of_message(room, "Knowledge Bot: Hotel Paris?") == "de"
    assert await replies.of_message("!b:localhost", "Knowledge Bot: Hotel Paris?") is None
    configured = languages(finder, '[rooms."!a:localhost"]\nlanguage = "es"\n')
    assert await configured.of_message(room, "Wie viele Urlaubstage?") == "es"


async def test_a_question_in_another_script_is_answered_in_english_and_resets_the_room(finder):
    """The detector knows no Russian nor Chinese: such a question got the language of
    the question before it (Spanish, in a new user's walk-through), and so did the
    unclear English one after it."""
    replies = languages(finder)
    room = "!a:localhost"
    assert await replies.of_message(room, "¿Cuántos días de vacaciones tengo?") == "es"
    for other in ("Что означает ошибка VPN WG-503?", "如何打印文件？", "丢失工牌怎么办？"):
        assert await replies.of_message(room, f"Knowledge Bot: {other}") is None, other
    assert await replies.of_message(room, "Knowledge Bot: Hotel Paris?") is None
    # A question in the room's configured language stays in it whatever its script.
    configured = languages(finder, '[rooms."!a:localhost"]\nlanguage = "es"\n')
    assert await configured.of_message(room, "如何打印文件？") == "es"
