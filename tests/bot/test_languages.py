"""The bot's own sentences in the room's language, or the asker's, on a fake account."""

from __future__ import annotations

from core import strings
from core.i18n.detection import LanguageFinder
from core.i18n.language import speaking
from tests.bot.harness import running_bot
from tests.bot.scenes import ALICE, BOB, ask, direct_chat, invites, say


async def test_help_comes_in_the_rooms_language(tmp_path):
    async with running_bot(tmp_path, '[room_defaults]\nlanguage = "fr"\n') as bot:
        bot.account.add_room("!r", [ALICE])
        reply = await ask(bot, "!r", ALICE, "!help")
        with speaking("fr"):
            header, describe_help = strings.HELP_HEADER, strings.COMMAND_DESCRIPTIONS["help"]
        assert reply["body"].startswith(header) and header != "**What I can do in this room**"
        assert describe_help in reply["body"]


async def test_a_spanish_speakers_catchup_has_spanish_headings(tmp_path):
    config = invites(ALICE, BOB)
    async with running_bot(tmp_path, config, rooms=True, languages=LanguageFinder()) as bot:
        bot.account.add_room("!r", [ALICE, BOB])
        direct = await direct_chat(bot, "!dm", BOB)
        say(bot, "!r", ALICE, "Decision: the Vega launch moves to Monday.")
        say(bot, "!r", ALICE, "bob, can you review the migration script by Friday?", mentions=[BOB])

        catchup = (await ask(bot, direct, BOB, "!catchup desde hace 3 días"))["body"]
        with speaking("es"):
            for_you, decisions = strings.CATCHUP_FOR_YOU, strings.SUMMARY_DECISIONS
        assert for_you != "For you" and f"*{for_you}*" in catchup, catchup
        assert decisions in catchup and "Vega launch moves to Monday" in catchup
