"""A direct chat is decided when the question is stored; the answer is computed for the
asker alone only while the room still has no other reader."""

from __future__ import annotations

import asyncio

from tests.bot.harness import eventually, running_bot

ANN, BEN = "@ann:fake.test", "@ben:fake.test"
INVITES = '[invites]\nallowed_users = ["@ann:fake.test"]\n'


async def _direct_chat(bot, room: str) -> None:
    bot.account.add_room(room, [ANN])
    bot.account.invite(room, ANN, direct=True)

    async def joined() -> bool | None:
        joined_ms, direct = await bot.state.joined_room(room)
        return True if joined_ms and direct else None

    await eventually(joined)


async def test_a_direct_chat_is_answered_with_the_askers_rights(tmp_path):
    async with running_bot(tmp_path, INVITES) as bot:
        await _direct_chat(bot, "!dm")
        await bot.reply_to(bot.ask("!dm", ANN, "what is the travel policy?"))
        [request] = bot.answerer.requests
        assert request.is_direct and request.readers == (ANN,)


async def test_someone_who_joined_before_the_answer_makes_it_no_direct_chat(tmp_path):
    """The question was decided as asked in a direct chat; Ben joined while it was
    answered: the answer is written again for both, with both readers' rights (it was
    written again with the asker's alone while the decision's `direct` was trusted)."""
    async with running_bot(tmp_path, INVITES) as bot:
        await _direct_chat(bot, "!dm")
        gate = bot.answerer.gate = asyncio.Event()
        asked = asyncio.Event()

        async def on_question(request) -> None:
            asked.set()

        bot.answerer.on_question = on_question
        question = bot.ask("!dm", ANN, "what is the travel policy?")
        await asked.wait()
        bot.account.add_room("!dm", [ANN, BEN])  # Ben joins while it is written
        bot.account.say("!dm", BEN, "hi both")
        gate.set()
        notice = await bot.reply_to(question)
        assert "Someone new can read this room now" in notice.content["body"]
        # Answered again, for both of them.
        await bot.account.wait_for(
            lambda: next(
                (w for w in bot.account.messages() if "Answer to:" in w.content.get("body", "")),
                None,
            )
        )
        first, again = bot.answerer.requests
        assert first.is_direct and first.readers == (ANN,)
        assert not again.is_direct
        assert set(again.readers) == {ANN, BEN}
