"""The room's history, memories and summaries follow what people do to their messages:
a redacted message is never quoted again, a memory made from one is forgotten, and an
edited one is found and summarised in its new form."""

from __future__ import annotations

import time

import pytest

from bot.dev.synapse import free_port
from tests.e2e.people import from_user, replies_to
from tests.e2e.scripted import ask
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config

pytestmark = pytest.mark.e2e

# History windows of two lines, embedded as soon as they are complete; search-only.
# Questions asked again while a window is embedded count towards no limit here.
CONFIG = (
    "[memory]\nwindow_lines = 2\nwindow_overlap = 0\n"
    "[guardrails]\nuser_questions_per_minute = 0\nroom_questions_per_minute = 0\n"
)


async def ask_until(person, room, question, bot, wanted: str, tries: int = 10) -> dict:
    """The answer, asked again until it holds `wanted` (a window is embedded in the
    background once complete)."""
    for _ in range(tries):
        answer = await ask(person, room, question, bot)
        if wanted in answer["body"]:
            return answer
    raise AssertionError(f"{wanted!r} never came: {answer['body']}")


async def edit(person, room: str, event_id: str, body: str) -> None:
    await person.send(
        room,
        {
            "msgtype": "m.text",
            "body": f"* {body}",
            "m.new_content": {"msgtype": "m.text", "body": body},
            "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
        },
    )


async def test_redactions_and_edits_are_followed_by_history_and_memories(people, bot):
    alice = await people("alice")
    bot.write_config(knowledge_config(free_port()) + CONFIG, allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)

    secret = await alice.say(room, "The Orion launch code is Zebra-42, keep it quiet.")
    await alice.say(room, "Noted, Orion is on track.")
    question = "what is the Orion launch code?"
    await ask_until(alice, room, question, bot, "Zebra-42")
    await alice.redact(room, secret)
    answer = await ask(alice, room, question, bot)  # after the redaction, in order
    assert "Zebra-42" not in answer["body"], answer["body"]

    remember = await alice.say(
        room, "remember that the guest wifi password is Kiwi-9", mentions=[bot.user_id]
    )
    await alice.wait_for(room, replies_to(remember), timeout=60)
    await ask_until(alice, room, "what is the guest wifi password?", bot, "Kiwi-9")
    await alice.redact(room, remember)
    answer = await ask(alice, room, "what is the guest wifi password?", bot)
    assert "Kiwi-9" not in answer["body"], "the memory made from it is forgotten"

    decision = await alice.say(room, "Decision: the Vega release ships on Friday.")
    await alice.say(room, "Great, thanks all.")
    await ask_until(alice, room, "when does the Vega release ship?", bot, "Friday")
    await edit(alice, room, decision, "Decision: the Vega release ships on Monday.")
    answer = await ask_until(alice, room, "when does the Vega release ship?", bot, "Monday")
    assert "Friday" not in answer["body"], "the edited decision is shown in its new form"

    summary = await ask(alice, room, "!summarize", bot)
    assert "ships on Monday" in summary["body"], summary["body"]
    assert "Friday" not in summary["body"] and "Zebra-42" not in summary["body"]


SUMMARIES = (
    '[sources.matrix]\ntoken = "matrix-token"\n'
    '[collections.room-summaries]\nsource = "matrix"\n'
    '[summaries]\ncollection = "room-summaries"\npost_in_room = true\n'
    '[room_defaults]\nsummary_schedule = "every 10s"\n'
    "[guardrails]\nuser_questions_per_minute = 0\nroom_questions_per_minute = 0\n"
)


async def test_a_summary_that_quoted_a_redacted_message_is_made_again_without_it(people, bot):
    alice = await people("alice")
    bot.write_config(SUMMARIES, allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)
    secret = await alice.say(room, "Decision: the Orion budget is 77 thousand euros.")
    await alice.say(room, "Decision: the Lyra launch is on Friday.")
    # Posted when made (the bot takes up a new room's schedule at once).
    posted = await alice.wait_for(
        room, lambda e: from_user(bot.user_id)(e) and "Orion budget" in str(e), timeout=90
    )
    assert "Lyra launch" in posted["content"]["body"]
    await ask_until(alice, room, "what did we decide about the Orion budget?", bot, "77 thousand")

    await alice.redact(room, secret)
    gone = await ask(alice, room, "what did we decide about the Orion budget?", bot)
    assert "77 thousand" not in gone["body"], "the summary quoting it left at once"
    again = await ask_until(alice, room, "when is the Lyra launch?", bot, "Lyra launch")
    assert "Orion" not in again["body"], "made again from the messages as they are now"


async def test_a_rooms_retention_bounds_what_its_history_gives(people, bot):
    alice = await people("alice")
    bot.write_config(knowledge_config(free_port()) + CONFIG, allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)
    lifetime = 20
    await alice.client.room_put_state(room, "m.room.retention", {"max_lifetime": lifetime * 1000})
    await alice.say(room, "The Orion launch code is Zebra-42, keep it quiet.")
    await alice.say(room, "Noted, Orion is on track.")
    await ask_until(alice, room, "what is the Orion launch code?", bot, "Zebra-42")

    # The condition is time itself: once the lines are older than the room keeps them
    # (the bot's clock moved on by their lifetime; the room's next lines come after).
    bot.clock_at_least = time.time() + lifetime
    await alice.say(room, "The Lyra launch code is Kiwi-9.")
    await alice.say(room, "Noted, Lyra too.")
    await ask_until(alice, room, "what is the Lyra launch code?", bot, "Kiwi-9")
    answer = await ask(alice, room, "what is the Orion launch code?", bot)
    assert "Zebra-42" not in answer["body"], answer["body"]
