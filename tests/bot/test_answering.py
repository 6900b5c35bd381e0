"""Questions answered on a fake account: what an answer leaves for the next question."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

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
        feedback = bot.feedback

        def held(write: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
            async def after_the_follow_up(*args: object) -> None:
                await recorded.wait()
                await write(*args)

            return after_the_follow_up

        # The answer's records (its event for votes, then the answer itself) are written
        # only once the follow-up is answered: the first while the answer is being sent.
        feedback.note_answer_event = held(feedback.note_answer_event)  # type: ignore[method-assign]
        feedback.store_answer = held(feedback.store_answer)  # type: ignore[method-assign]
        asked = bot.ask("!r", ANN, "what is the travel budget?")
        answer = await bot.reply_to(asked)
        thread = {"m.relates_to": {"rel_type": "m.thread", "event_id": asked}}
        follow_up = bot.ask("!r", ANN, "what else does that note say?", **thread)
        await bot.reply_to(follow_up)
        recorded.set()
        context = [line.text for line in bot.answerer.requests[-1].recent]
        assert answer.content["body"] in context, context
