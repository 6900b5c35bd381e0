"""Votes on the bot's answers, on a fake account."""

from __future__ import annotations

import json

from bot.inbox.links import build_room_link
from bot.matrix.fake import FakeAccount
from core import strings
from core.requests import Answer, Request, Source
from core.trace import AnswerStep
from tests.bot.harness import BOT, Bot, eventually, running_bot
from tests.bot.scenes import ALICE, ask, posted, react, redact, say, written

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


THUMBS_UP_MEDIUM = "\U0001f44d\U0001f3fd"
THUMBS_DOWN = "\U0001f44e"
ADMIN = "@admin:fake.test"
ADMINS = f'[bot]\nadmin_room = "!admin"\n[feedback]\nadmins = ["{ADMIN}"]\n'


def travel_answer(request: Request) -> Answer:
    """An answer from the travel policy, written by the model."""
    source = Source("Travel policy", "https://wiki/t", "handbook", "travel", 0.82)
    written = AnswerStep(0.1, [], "raw", "test-model", "v1")
    return Answer("Trains are booked through Travelink [1].", sources=(source,), trace=(written,))


async def report_until(bot: Bot, expected: str, tries: int = 30) -> str:
    """The admins' report, asked again until it shows `expected` (votes are recorded as
    they arrive)."""
    for _ in range(tries):
        text = (await ask(bot, "!admin", ADMIN, "!feedback"))["body"]
        if expected in text:
            return text
    raise AssertionError(f"the report never showed {expected!r}; last:\n{text}")


async def test_votes_are_kept_withdrawn_persisted_and_reported_to_admins_only(tmp_path):
    account = FakeAccount(BOT)
    account.add_room("!admin", [ADMIN])
    # The admin reads alice's room, so the report may show its answers in detail.
    account.add_room("!r", [ALICE, ADMIN])
    row = {votes: f"| {build_room_link('!r', BOT)} | {votes} |" for votes in ("1 / 0", "0 / 1")}
    async with running_bot(tmp_path, ADMINS, account, feedback=True) as bot:
        bot.answerer.reply = travel_answer
        question = say(bot, "!r", ALICE, "how do I book trains?", mentions=[BOT])
        answer = await bot.reply_to(question)
        assert bot.feedback is not None
        feedback = bot.feedback
        await eventually(lambda: feedback.answer_of_event(answer.event_id))  # recorded
        react(bot, "!r", ALICE, answer.event_id, THUMBS_UP_MEDIUM)
        await report_until(bot, row["1 / 0"])

        down = react(bot, "!r", ALICE, answer.event_id, THUMBS_DOWN)
        asked = await written(bot, lambda w: w.content.get("body") == strings.FEEDBACK_ASK)
        thread = asked.content["m.relates_to"]["event_id"]
        assert thread == answer.content["m.relates_to"]["event_id"], "in the answer's thread"
        reply = say(bot, "!r", ALICE, "the link is dead", thread=thread, reply_to=asked.event_id)
        assert (await bot.reply_to(reply)).content["body"] == strings.FEEDBACK_THANKS
        report = await report_until(bot, row["0 / 1"])
        assert "“how do I book trains?”" in report and "Travel policy (handbook/travel" in report
        assert "the link is dead" in report

        redact(bot, "!r", ALICE, down)
        await report_until(bot, row["1 / 0"])
        react(bot, "!r", ALICE, asked.event_id, THUMBS_DOWN)
        react(bot, "!r", ALICE, question, THUMBS_DOWN)

    async with running_bot(tmp_path, ADMINS, account, feedback=True) as bot:  # restarted
        report = await report_until(bot, row["1 / 0"])
        assert strings.FEEDBACK_NO_WORST in report, "reactions on other messages were ignored"
        asks = [w for w in posted(bot, "!r") if w.content.get("body") == strings.FEEDBACK_ASK]
        assert len(asks) == 1

        refused = await ask(bot, "!r", ALICE, "!feedback")
        assert refused["body"] == strings.FEEDBACK_REFUSED
        exported = await ask(bot, "!admin", ADMIN, "!feedback export")
        assert exported["body"] == strings.FEEDBACK_EXPORTED.format(
            count=1, name="feedback-last-30-days.jsonl"
        )
        [upload] = [w for w in posted(bot, "!admin") if w.content.get("msgtype") == "m.file"]
        assert upload.content["body"] == "feedback-last-30-days.jsonl"
        [line] = upload.content["data"].decode().splitlines()
        record = json.loads(line)
        assert record["question"] == "how do I book trains?" and record["model"] == "test-model"
        assert record["votes"][0]["vote"] == "up" and record["comments"] == ["the link is dead"]
        assert record["sources"][0]["document_id"] == "travel" and record["sources"][0]["score"]
