"""`!summarize` on a fake account, with the summarizer that needs no model (the
messages' own words): links to the messages, ranges in words, threads, and only the
room's own discussion. (How a model's draft is rendered: tests/unit/test_summaries.py.)"""

from __future__ import annotations

import pytest

from bot.inbox.links import build_permalink
from core import strings
from tests.bot.scenes import ALICE, BOB, ask, running_rooms, say


async def test_summarize_links_real_messages_and_reads_ranges_and_threads(tmp_path):
    async with running_rooms(tmp_path) as bot:
        bot.account.add_room("!r", [ALICE])

        def linked(event_id: str, content: dict) -> bool:
            return build_permalink("!r", event_id, ALICE) in content["formatted_body"]

        said = [
            say(bot, "!r", ALICE, "Decision: we ship Atlas on 14 December"),
            say(bot, "!r", ALICE, "I will write the release notes by Friday"),
            say(bot, "!r", ALICE, "who updates the status page?"),
        ]
        first = await ask(bot, "!r", ALICE, "!summarize")
        assert "we ship Atlas on 14 December" in first["body"]
        assert "I will write the release notes by Friday (" in first["body"]
        assert "who updates the status page?" in first["body"]
        assert all(linked(event_id, first) for event_id in said)
        assert strings.SUMMARY_NO_DECISION not in first["body"]

        later = say(bot, "!r", ALICE, "Decision: the freeze starts on 10 December")
        second = await ask(bot, "!r", ALICE, "!summarize")
        assert linked(later, second)
        # Asked as soon as the first was read: the first is marked before it is shown.
        assert not linked(said[0], second), "since the last one"
        today = await ask(bot, "!r", ALICE, "!summarize today")
        assert all(linked(event_id, today) for event_id in [*said, later])
        nothing = await ask(bot, "!r", ALICE, "!summarize in 2025")
        assert nothing["body"].startswith("There is nothing to summarise in this room")
        unreadable = await ask(bot, "!r", ALICE, "!summarize the release")
        assert unreadable["body"] == strings.SUMMARY_RANGE_UNREADABLE.format(
            args="the release", prefix="!"
        )

        root = say(bot, "!r", ALICE, "Thread: which CI runner do we keep?")
        inside = say(bot, "!r", ALICE, "Decision: we keep the ARM runners", thread=root)
        thread_summary = await ask(bot, "!r", ALICE, "!summarize", thread=root)
        assert linked(inside, thread_summary) and linked(root, thread_summary)
        assert not linked(later, thread_summary)
        assert bot.answerer.requests == [], "commands, no questions"


QUESTIONS_TO_THE_BOT = [
    "how often are laptops replaced?",
    "where is the VPN gateway?",
    "who approves travel?",
    "what is the wifi password policy?",
    "how many days of leave do we get?",
    "when does the canteen open?",
    "how do I print from my laptop?",
    "what is error WG-503?",
]


@pytest.mark.parametrize("history", [True, False], ids=["history kept", "history off"])
async def test_questions_to_the_bot_are_not_the_rooms_discussion_in_a_summary(tmp_path, history):
    """With the room's history kept or turned off. (The lines read from the bot's store
    leave them out as those from the homeserver do: tests/bot/test_summary_lines.py.)"""
    rooms = "" if history else "\n[room_defaults]\nhistory = false\n"
    async with running_rooms(tmp_path, rooms) as bot:
        bot.account.add_room("!r", [ALICE, BOB])
        say(bot, "!r", ALICE, "The release branch is cut, QA starts tomorrow.")
        say(bot, "!r", BOB, "do we need a freeze on Thursday evening?")
        for question in QUESTIONS_TO_THE_BOT:  # each answered in its thread
            await ask(bot, "!r", ALICE, question)
        summary = (await ask(bot, "!r", ALICE, "!summarize"))["body"]
        assert "do we need a freeze on Thursday evening?" in summary, summary
        for question in QUESTIONS_TO_THE_BOT:
            assert question not in summary, f"{question!r}: asked of the bot, not the room"
        assert len(bot.answerer.requests) == len(QUESTIONS_TO_THE_BOT)


async def test_a_summary_that_could_not_be_posted_is_made_again_whole(tmp_path):
    async with running_rooms(tmp_path) as bot:
        bot.account.add_room("!r", [ALICE])
        said = say(bot, "!r", ALICE, "Decision: we ship Atlas on 14 December")
        bot.account.fail("send")  # the homeserver refuses the summary once
        failed = await ask(bot, "!r", ALICE, "!summarize")
        assert "went wrong" in failed["body"], failed
        # Asked again: from the same start, nothing skipped.
        summary = await ask(bot, "!r", ALICE, "!summarize")
        assert build_permalink("!r", said, ALICE) in summary["formatted_body"], summary


async def test_a_summary_names_people_as_the_room_shows_them(tmp_path):
    """Quoted lines go by the members' display names, as in the catch-up ("Alice Liddell:
    …", not "@alice:fake.test: …"); the ledger still knows whose action item it is."""
    async with running_rooms(tmp_path) as bot:
        bot.account.add_room("!r", [ALICE, BOB])
        bot.account.set_member_name("!r", ALICE, "Alice Liddell")
        bot.account.set_member_name("!r", BOB, "Bob")
        say(bot, "!r", ALICE, "Decision: we ship Atlas on 14 December")
        say(bot, "!r", BOB, "I will write the release notes by Friday")
        summary = (await ask(bot, "!r", ALICE, "!summarize"))["body"]
        assert "Alice Liddell: Decision: we ship Atlas" in summary, summary
        assert "Bob: I will write the release notes" in summary, summary
        assert ALICE not in summary and BOB not in summary
        mine = (await ask(bot, "!r", BOB, "!actions mine"))["body"]
        assert "write the release notes" in mine, mine
