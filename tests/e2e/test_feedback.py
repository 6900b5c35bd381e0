"""Feedback in an encrypted room: a vote counts, the question after a 👎 is encrypted too.
(Votes kept, withdrawn, kept across a restart, and the admins' report, refused to
others: tests/bot/test_feedback.py, on the fake account.)"""

from __future__ import annotations

import pytest

from core import strings
from tests.e2e.people import replies_to
from tests.e2e.scripted import finished_reply, start_alice_and_bot
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import put_travel_policy

pytestmark = pytest.mark.e2e
THUMBS_DOWN = "\U0001f44e"


async def test_a_vote_in_an_encrypted_room_counts_too(people, bot, llm):
    alice, port = await start_alice_and_bot(people, bot, llm)
    room = await room_with_bot(alice, bot, encrypted=True)
    await put_travel_policy(port)
    question = await alice.say(room, "how do I book trains?", mentions=[bot.user_id])
    answer = await alice.wait_for(room, replies_to(question), timeout=60)
    assert answer["event_id"] in alice.decrypted
    await alice.react(room, answer["event_id"], THUMBS_DOWN)
    asked = await alice.wait_for(
        room, lambda e: e["content"].get("body") == strings.FEEDBACK_ASK, timeout=30
    )
    assert asked["event_id"] in alice.decrypted, "the question after the 👎 is encrypted too"
    # A new question in the thread is answered, not taken for the comment; the comment is.
    thread = asked["content"]["m.relates_to"]["event_id"]
    again = await alice.say(room, "how far ahead are trains booked?", thread=thread)
    answer = await finished_reply(alice, room, replies_to(again))
    assert "Travelink" in answer["body"], answer["body"]
    comment = await alice.say(room, "the first answer cited the wrong page", thread=thread)
    thanks = await alice.wait_for(room, replies_to(comment), timeout=30)
    assert thanks["content"]["body"] == strings.FEEDBACK_THANKS
