"""Edits and redactions, followed as the inbox's work, on a fake account."""

from __future__ import annotations

import logging

from core.requests import Request
from tests.bot.harness import eventually, running_bot

ANN, BEN, MAL = "@ann:fake.test", "@ben:fake.test", "@mal:fake.test"


async def test_a_question_after_a_redaction_waits_until_it_is_followed(tmp_path, caplog):
    """The redaction's following fails once (a store refuses writes): it is tried again,
    and the question that came after it is answered only once it was followed."""
    async with running_bot(tmp_path, feedback=True) as bot:
        assert bot.feedback is not None
        bot.account.add_room("!r", [ANN, BEN])
        secret = bot.account.say("!r", ANN, "the door code is 4711")
        await bot.feedback.db.execute("PRAGMA query_only = 1")
        redaction = bot.account.add_event(
            "!r", ANN, "m.room.redaction", {}, redacts=secret["event_id"]
        )
        followed_first: list[bool] = []

        async def check(request: Request) -> None:
            pending = [e.source["event_id"] for e in await bot.state.pending_events()]
            followed_first.append(redaction["event_id"] not in pending)

        bot.answerer.on_question = check
        with caplog.at_level(logging.WARNING, "bot.inbox.dispatcher"):
            asked = bot.ask("!r", BEN, "what is the door code?")

            async def refused() -> bool | None:
                return True if any("stays pending" in r.message for r in caplog.records) else None

            await eventually(refused)
        await bot.feedback.db.execute("PRAGMA query_only = 0")
        await bot.reply_to(asked)
        assert followed_first == [True], "the question was answered before the redaction"


async def test_an_edit_is_followed_in_the_conversation(tmp_path):
    async with running_bot(tmp_path) as bot:
        bot.account.add_room("!r", [ANN, BEN])
        said = bot.account.say("!r", ANN, "the release is on Monday")
        bot.account.say(
            "!r",
            ANN,
            "* the release is on Tuesday",
            **{
                "m.new_content": {"msgtype": "m.text", "body": "the release is on Tuesday"},
                "m.relates_to": {"rel_type": "m.replace", "event_id": said["event_id"]},
            },
        )
        await bot.reply_to(bot.ask("!r", BEN, "when is the release?"))
        recent = [line.text for line in bot.answerer.requests[0].recent]
        assert "the release is on Tuesday" in recent
        assert "the release is on Monday" not in recent


async def test_a_redaction_in_another_room_removes_nothing_of_this_one(tmp_path):
    """A redaction names its target by event id alone: one in room B that names room A's
    messages (a buggy bridge, a homeserver that lies) leaves everything the bot keeps
    of room A: its conversation, its question's record and the vote on its answer. The
    same redaction in room A removes them (the control)."""
    async with running_bot(tmp_path, feedback=True) as bot:
        assert bot.feedback is not None
        bot.account.add_room("!a", [ANN, BEN])
        bot.account.add_room("!b", [MAL])
        secret = bot.account.say("!a", ANN, "the door code is 4711")
        asked = bot.ask("!a", BEN, "what is the door code?")
        answer = await bot.reply_to(asked)
        answer_id = await eventually(lambda: bot.feedback.answer_of_event(answer.event_id))
        vote = bot.account.add_event(
            "!a",
            BEN,
            "m.reaction",
            {
                "m.relates_to": {
                    "rel_type": "m.annotation",
                    "event_id": answer.event_id,
                    "key": "👍",
                }
            },
        )
        assert await eventually(lambda: bot.feedback.vote_of(answer_id, BEN)) == "up"

        for target in (secret["event_id"], asked, vote["event_id"]):
            bot.account.add_event("!b", MAL, "m.room.redaction", {}, redacts=target)
        # Followed before any later question is answered (the inbox's barrier).
        await bot.reply_to(bot.ask("!b", MAL, "anything new?"))

        assert await bot.feedback.vote_of(answer_id, BEN) == "up"
        [record] = [r async for r in bot.feedback.export(since=0)]
        assert record["question"] == "what is the door code?"
        assert not await bot.state.was_redacted(asked)
        await bot.reply_to(bot.ask("!a", ANN, "and the door code again?"))
        recent = [line.text for line in bot.answerer.requests[-1].recent]
        assert "the door code is 4711" in recent

        bot.account.add_event("!a", ANN, "m.room.redaction", {}, redacts=secret["event_id"])
        bot.account.add_event("!a", BEN, "m.room.redaction", {}, redacts=asked)
        await bot.reply_to(bot.ask("!a", ANN, "anything else?"))
        assert await bot.state.was_redacted(asked)
        [record] = [r async for r in bot.feedback.export(since=0)]
        assert record["question"] == ""
        recent = [line.text for line in bot.answerer.requests[-1].recent]
        assert "the door code is 4711" not in recent
