"""Questions answered on a fake account: what an answer leaves for the next question."""

from __future__ import annotations

import asyncio

from tests.bot.harness import running_bot

ANN = "@ann:fake.test"


async def test_a_follow_up_sent_as_the_answer_shows_is_read_with_the_answer(tmp_path):
    """Ann replies in the answer's thread the moment it shows, while the bot still writes
    its records of that answer: her follow-up is read with the answer as context (seen
    end to end under load, where the follow-up's prompt held no conversation at all)."""
    async with running_bot(tmp_path, feedback=True) as bot:
        assert bot.feedback is not None
        bot.account.add_room("!r", [ANN])
        recorded = asyncio.Event()
        store_answer = bot.feedback.store_answer

        async def slow_store_answer(record: object) -> None:
            await recorded.wait()  # the record is written only after the follow-up
            await store_answer(record)  # type: ignore[arg-type]

        bot.feedback.store_answer = slow_store_answer  # type: ignore[method-assign]
        asked = bot.ask("!r", ANN, "what is the travel budget?")
        answer = await bot.reply_to(asked)
        thread = {"m.relates_to": {"rel_type": "m.thread", "event_id": asked}}
        follow_up = bot.ask("!r", ANN, "what else does that note say?", **thread)
        await bot.reply_to(follow_up)
        recorded.set()
        context = [line.text for line in bot.answerer.requests[-1].recent]
        assert answer.content["body"] in context, context
