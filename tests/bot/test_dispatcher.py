"""The dispatcher and the sync loop on a fake account: what people in a room see the bot
do, without a homeserver."""

from __future__ import annotations

import asyncio
import logging

from bot.matrix.types import WriteRefused
from bot.runtime.leadership import Leadership, drain_while_held
from core import strings
from tests.bot.harness import BOT, eventually, running_bot

ANN, BEN = "@ann:fake.test", "@ben:fake.test"


async def test_a_question_is_answered_in_its_thread(tmp_path):
    async with running_bot(tmp_path) as bot:
        bot.account.add_room("!r", [ANN, BEN])
        asked = bot.ask("!r", ANN, "what is our travel policy?")
        reply = await bot.reply_to(asked)
        assert reply.content["body"].startswith("Answer to: what is our travel policy?")
        assert reply.content["m.relates_to"]["event_id"] == asked, "in the question's thread"
        request = bot.answerer.requests[0]
        assert set(request.readers) == {ANN, BEN}, "the answer is for everyone in the room"


async def test_a_message_not_for_the_bot_gets_nothing(tmp_path):
    async with running_bot(tmp_path) as bot:
        bot.account.add_room("!r", [ANN, BEN])
        chat = bot.account.say("!r", ANN, "lunch at noon?")
        sentinel = bot.ask("!r", BEN, "and the expense limit?")
        await bot.reply_to(sentinel)
        assert [r.text for r in bot.answerer.requests] == ["and the expense limit?"]
        assert not [m for m in bot.account.messages() if chat["event_id"] in str(m.content)]


async def test_a_command_turned_off_in_the_room_is_explained_not_run(tmp_path):
    config = '[rooms."!quiet"]\ncommands_enabled = false\n'
    async with running_bot(tmp_path, config) as bot:
        bot.account.add_room("!quiet", [ANN])
        asked = bot.ask("!quiet", ANN, "!summarize last 365 days")
        reply = await bot.reply_to(asked)
        assert reply.content["body"].startswith(strings.COMMANDS_OFF.split("{")[0].strip())
        assert bot.answerer.requests == []


async def test_the_bot_does_not_answer_itself(tmp_path):
    async with running_bot(tmp_path) as bot:
        bot.account.add_room("!r", [ANN])
        bot.account.say("!r", BOT, "Knowledge Bot: a loop?", **{"m.mentions": {"user_ids": [BOT]}})
        sentinel = bot.ask("!r", ANN, "a real question")
        await bot.reply_to(sentinel)
        assert [r.text for r in bot.answerer.requests] == ["a real question"]


async def test_a_lost_lease_leaves_the_question_for_the_next_holder(tmp_path):
    """The process that lost the lease writes nothing more, and does not mark the
    question answered: the process that took over answers it."""
    async with running_bot(tmp_path) as bot:
        bot.answerer.gate = asyncio.Event()
        bot.account.add_room("!r", [ANN])
        asked = bot.ask("!r", ANN, "who approves travel?")
        await bot.account.wait_for(lambda: bot.answerer.requests or None)
        bot.account.lease_left = lambda: 0.0
        bot.answerer.gate.set()
        await bot.dispatcher.drain(grace_seconds=5)  # the answer in flight ends
        pending = [event.source["event_id"] for event in await bot.state.pending_events()]
        assert asked in pending, "still to be answered"
        assert not bot.account.messages(), "nothing written once the lease was lost"


async def test_the_fence_refuses_sealed_text_to_a_room_that_is_not_encrypted(tmp_path):
    async with running_bot(tmp_path) as bot:
        bot.account.add_room("!plain", [ANN])
        bot.account.add_room("!sealed", [ANN], encrypted=True)
        await bot.account.send("!sealed", {"msgtype": "m.notice", "body": "ok"}, sealed=True)
        try:
            await bot.account.send("!plain", {"msgtype": "m.notice", "body": "x"}, sealed=True)
        except WriteRefused:
            pass
        else:
            raise AssertionError("sealed text went to a room the homeserver can read")
        assert [m.room_id for m in bot.account.messages()] == ["!sealed"]


async def test_commands_count_against_the_rate_limits_like_questions(tmp_path):
    """A `!summarize last 365 days` costs many model calls: commands share the asker's
    questions-per-minute with their questions (the help aside)."""
    config = "[guardrails]\nuser_questions_per_minute = 1\n"
    async with running_bot(tmp_path, config, rooms=True) as bot:
        bot.account.add_room("!r", [ANN])
        first = await bot.reply_to(bot.ask("!r", ANN, "!summarize last 365 days"))
        assert first.content["body"] != strings.RATE_LIMITED["user"]
        second = await bot.reply_to(bot.ask("!r", ANN, "!summarize last 365 days"))
        assert second.content["body"] == strings.RATE_LIMITED["user"]
        helped = await bot.reply_to(bot.ask("!r", ANN, "!help"))
        assert helped.content["body"] != strings.RATE_LIMITED["user"]


async def test_a_reply_sent_but_not_recorded_is_not_sent_twice(tmp_path, caplog):
    """A crash (here: the store refusing writes) between sending the reply and keeping
    its id: the message is answered again, with the same transaction id, which the
    homeserver answers with the message it already has. One reply, not two."""
    async with running_bot(tmp_path) as bot:
        bot.account.add_room("!r", [ANN])
        refused = asyncio.Event()

        async def refuse_writes(request) -> None:
            if not refused.is_set():
                await bot.state.db.execute("PRAGMA query_only = 1")
                refused.set()

        bot.answerer.on_question = refuse_writes
        with caplog.at_level(logging.WARNING, "bot.inbox.dispatcher"):
            asked = bot.ask("!r", ANN, "who approves travel?")

            async def stays_pending() -> bool | None:
                return True if any("stays pending" in r.message for r in caplog.records) else None

            await eventually(stays_pending)
        assert bot.account.messages("!r"), "the reply went out before its id could be kept"
        await bot.state.db.execute("PRAGMA query_only = 0")
        await eventually(lambda: _done(bot, asked))
        replies = [m for m in bot.account.messages("!r") if "m.new_content" not in m.content]
        assert len(replies) == 1, "the answer went into the message already sent"
        assert len(bot.answerer.requests) == 2, "asked again after the store came back"


async def _done(bot, event_id: str) -> bool | None:
    pending = [e.source["event_id"] for e in await bot.state.pending_events()]
    return True if event_id not in pending else None


async def test_a_stop_as_the_lease_is_about_to_end_still_tells_the_asker(tmp_path):
    """The restart notice must not depend on when the lease was last renewed: a stop for
    maintenance can last hours, and "Working on it…" would stay all that time."""
    now = [0.0]
    async with running_bot(tmp_path, "[bot]\nplaceholder_after_seconds = 0\n") as bot:
        leadership = Leadership(bot.state, BOT, 2, clock=lambda: now[0])
        await leadership.acquire()
        bot.account.lease_left = leadership.remaining
        bot.answerer.gate = asyncio.Event()  # the answer takes longer than the grace
        bot.account.add_room("!r", [ANN])
        asked = bot.ask("!r", ANN, "what is our travel policy?")

        async def placeholder() -> bool | None:
            return True if bot.account.messages("!r") else None

        await eventually(placeholder)
        now[0] = 1.7  # the last renewal was long ago: the lease is nearly over
        await drain_while_held(bot.dispatcher, leadership, grace_seconds=0.05)
        notice = await bot.reply_to(asked)
        assert notice.content.get("m.new_content", notice.content)["body"] == strings.INTERRUPTED
        assert await bot.state.pending_events(), "answered after the restart"
