"""Questions answered on a fake account: what an answer leaves for the next question."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from bot.matrix.fake import Written
from core import strings
from core.requests import Answer, Request
from tests.bot.harness import BOT, running_bot
from tests.bot.scenes import ALICE, posted, replies, say, settle, written

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


def understood(request: Request) -> Answer:
    """What the bot says without knowledge: the question as it understood it, quoted."""
    return Answer(strings.NO_KNOWLEDGE_YET.format(question=request.text), kind="notice")


async def test_a_mention_gets_a_threaded_notice_and_a_plain_message_none(tmp_path):
    async with running_bot(tmp_path) as bot:
        bot.answerer.reply = understood
        bot.account.add_room("!r", [ALICE])
        ignored = say(bot, "!r", ALICE, "just chatting among ourselves")
        question = say(
            bot,
            "!r",
            ALICE,
            "Knowledge Bot: what is our travel policy?",
            mentions=[BOT],
            format="org.matrix.custom.html",
            formatted_body=f'<a href="https://matrix.to/#/{BOT}">Knowledge Bot</a>: '
            "what is our travel policy?",
        )
        answer = (await bot.reply_to(question)).content
        assert answer["msgtype"] == "m.notice"
        relation = answer["m.relates_to"]
        assert relation["rel_type"] == "m.thread" and relation["event_id"] == question
        assert "what is our travel policy?" in answer["body"]
        assert "<blockquote>" in answer["formatted_body"]
        await settle(bot, "!r", ALICE)
        assert replies(bot, ignored) == []
        # The bot does not answer itself: one notice per question, no chain of replies.
        assert len(posted(bot, "!r")) == 1 + 2, "the answer and two sentinels' help"


async def test_follow_ups_in_the_bots_thread_and_replies_to_it_are_answered(tmp_path):
    async with running_bot(tmp_path) as bot:
        bot.account.add_room("!r", [ALICE])
        question = say(bot, "!r", ALICE, f"{BOT} who approves expenses?")
        answer = await bot.reply_to(question)

        follow_up = say(bot, "!r", ALICE, "and for travel?", thread=question)
        in_thread = await bot.reply_to(follow_up)
        assert in_thread.content["m.relates_to"]["event_id"] == question

        reply = say(
            bot, "!r", ALICE, "thanks, one more thing: who signs?", reply_to=answer.event_id
        )
        await bot.reply_to(reply)
        assert [r.text for r in bot.answerer.requests] == [
            "who approves expenses?",
            "and for travel?",
            "thanks, one more thing: who signs?",
        ]


async def test_slow_work_posts_a_placeholder_then_edits_it_into_the_answer(tmp_path):
    async with running_bot(tmp_path, "[bot]\nplaceholder_after_seconds = 0\n") as bot:
        bot.answerer.gate = asyncio.Event()
        bot.account.add_room("!r", [ALICE])
        question = say(bot, "!r", ALICE, "what is the vacation policy?", mentions=[BOT])
        placeholder = await written(bot, lambda w: w.content.get("body") == strings.PLACEHOLDER)
        assert placeholder.content["m.relates_to"]["m.in_reply_to"]["event_id"] == question
        assert "Working on it" in placeholder.content["body"]
        bot.answerer.gate.set()

        def edits_it(w: Written) -> bool:
            relates = w.content.get("m.relates_to", {})
            return relates.get("event_id") == placeholder.event_id

        edit = await written(bot, edits_it)
        assert edit.content["m.relates_to"]["rel_type"] == "m.replace"
        assert "vacation policy" in edit.content["m.new_content"]["body"]
        assert len(replies(bot, question)) == 1, "one message, edited"


async def test_a_failure_while_answering_gets_a_notice_not_silence(tmp_path):
    def broken(request: Request) -> Answer:
        """A pipeline whose model or store fails: the bot must still say something."""
        raise ConnectionError("secret internal detail")

    async with running_bot(tmp_path) as bot:
        bot.answerer.reply = broken
        bot.account.add_room("!r", [ALICE])
        question = say(bot, "!r", ALICE, "what is the travel policy?", mentions=[BOT])
        notice = (await bot.reply_to(question)).content["body"]
        assert notice.startswith("⚠️") and "went wrong" in notice and "reference" in notice
        assert "secret internal detail" not in notice


NOTHING = {
    "commands on: what to try next": ("", "!", True),
    "another prefix": ('[bot]\ncommand_prefix = "?"\n', "?", True),
    "commands off: no command to suggest": (
        '[rooms."!r"]\ncommands_enabled = false\n',
        "!",
        False,
    ),
}


async def test_nothing_found_says_what_to_try_next_where_commands_can_show_it(tmp_path):
    """A new user told "I found nothing" had no next step: where the room's commands are
    on, the notice says to try other words or to ask which collections are searched."""
    for name, (config, prefix, hinted) in NOTHING.items():
        async with running_bot(tmp_path / name.replace(" ", "-"), config) as bot:
            bot.answerer.reply = lambda request: Answer(
                strings.NOTHING_FOUND, kind="refusal", reason="nothing_found"
            )
            bot.account.add_room("!r", [ANN])
            body = (await bot.reply_to(bot.ask("!r", ANN, "who is the zorblax?"))).content["body"]
            hint = strings.NOTHING_FOUND_NEXT.format(prefix=prefix)
            expected = f"{strings.NOTHING_FOUND}\n\n{hint}" if hinted else strings.NOTHING_FOUND
            assert body == expected, name
