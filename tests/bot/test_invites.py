"""Invites on a fake account: the bot joins when the inviter is on the allow-list, by
user id or server, and leaves with a reason otherwise."""

from __future__ import annotations

from tests.bot.harness import BOT, running_bot
from tests.bot.scenes import ALICE, invited, invites, say

MALLORY = "@mallory:elsewhere.test"


async def test_invites_from_allowed_users_are_accepted_and_others_refused(tmp_path):
    async with running_bot(tmp_path, invites(ALICE)) as bot:
        bot.account.add_room("!accepted", {ALICE: "join"})
        await invited(bot, "!accepted", ALICE)
        answer = await bot.reply_to(say(bot, "!accepted", ALICE, "are you there?", mentions=[BOT]))
        assert answer.room_id == "!accepted"

        bot.account.invite("!refused", MALLORY)
        leave = await bot.account.wait_for(
            lambda: next((w for w in bot.account.written if w.kind == "leave"), None)
        )
        assert leave.room_id == "!refused" and "allow-list" in leave.content["reason"]
        assert [w.room_id for w in bot.account.written if w.kind == "join"] == ["!accepted"]


async def test_invites_from_an_allowed_server_are_accepted(tmp_path):
    async with running_bot(tmp_path, '[invites]\nallowed_servers = ["fake.test"]\n') as bot:
        bot.account.invite("!r", ALICE)
        joined = await bot.account.wait_for(
            lambda: next((w for w in bot.account.written if w.kind == "join"), None)
        )
        assert joined.room_id == "!r"
