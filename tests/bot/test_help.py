"""`!help` on a fake account."""

from __future__ import annotations

from tests.bot.harness import running_bot
from tests.bot.scenes import ALICE, say


async def test_help_lists_the_commands_of_the_room(tmp_path):
    """`!help` said plainly, with no mention: the commands, and how to ask."""
    async with running_bot(tmp_path) as bot:
        bot.account.add_room("!r", [ALICE])
        help_text = (await bot.reply_to(say(bot, "!r", ALICE, "!help"))).content["body"]
        assert "!help" in help_text and "Mention me" in help_text
