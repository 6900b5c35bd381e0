"""Votes on the bot's answers, on a fake account."""

from __future__ import annotations

from tests.bot.harness import eventually, running_bot

ANN = "@ann:fake.test"


async def test_a_vote_the_store_could_not_keep_is_kept_once_it_can(tmp_path):
    async with running_bot(tmp_path, feedback=True) as bot:
        assert bot.feedback is not None
        bot.account.add_room("!r", [ANN])
        answer = await bot.reply_to(bot.ask("!r", ANN, "who approves travel?"))
        answer_id = await eventually(lambda: bot.feedback.answer_of_event(answer.event_id))
        await bot.feedback.db.execute("PRAGMA query_only = 1")  # the database refuses writes
        bot.account.add_event(
            "!r",
            ANN,
            "m.reaction",
            {
                "m.relates_to": {
                    "rel_type": "m.annotation",
                    "event_id": answer.event_id,
                    "key": "👍",
                }
            },
        )
        await bot.reply_to(bot.ask("!r", ANN, "!help"))  # the vote was taken meanwhile
        await bot.feedback.db.execute("PRAGMA query_only = 0")
        vote = await eventually(lambda: bot.feedback.vote_of(answer_id, ANN))
        assert vote == "up"


async def test_a_vote_taken_back_is_gone(tmp_path):
    async with running_bot(tmp_path, feedback=True) as bot:
        assert bot.feedback is not None
        bot.account.add_room("!r", [ANN])
        answer = await bot.reply_to(bot.ask("!r", ANN, "who approves travel?"))
        answer_id = await eventually(lambda: bot.feedback.answer_of_event(answer.event_id))
        reaction = bot.account.add_event(
            "!r",
            ANN,
            "m.reaction",
            {
                "m.relates_to": {
                    "rel_type": "m.annotation",
                    "event_id": answer.event_id,
                    "key": "👎",
                }
            },
        )
        assert await eventually(lambda: bot.feedback.vote_of(answer_id, ANN)) == "down"
        bot.account.add_event("!r", ANN, "m.room.redaction", {}, redacts=reaction["event_id"])

        async def withdrawn() -> bool | None:
            return True if await bot.feedback.vote_of(answer_id, ANN) is None else None

        await eventually(withdrawn)


async def test_an_answer_whose_feedback_record_fails_is_not_asked_again(tmp_path):
    """The votes' store refuses writes while an answer goes out: the answer stands, the
    model is not asked again for it, and the question is done."""
    async with running_bot(tmp_path, feedback=True) as bot:
        assert bot.feedback is not None
        bot.account.add_room("!r", [ANN])
        await bot.feedback.db.execute("PRAGMA query_only = 1")
        asked = bot.ask("!r", ANN, "who approves travel?")
        answer = await bot.reply_to(asked)
        assert answer.content["body"].startswith("Answer to:")

        async def done() -> bool | None:
            pending = [e.source["event_id"] for e in await bot.state.pending_events()]
            return True if asked not in pending else None

        await eventually(done)
        await bot.feedback.db.execute("PRAGMA query_only = 0")
        assert len(bot.answerer.requests) == 1
