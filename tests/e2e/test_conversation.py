"""Talking to the bot in real rooms on a real Synapse."""

from __future__ import annotations

import pytest

from tests.e2e.people import membership_of, replies_to

pytestmark = pytest.mark.e2e


async def room_with_bot(person, bot, **room) -> str:
    room_id = await person.create_room([bot.user_id], **room)
    await person.wait_for(room_id, membership_of(bot.user_id, "join"))
    return room_id


async def test_encrypted_direct_chat_works_both_ways(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot, encrypted=True, direct=True)

    question = await alice.say(room, "where is the onboarding guide?")
    answer = await alice.wait_for(room, replies_to(question))
    assert answer["event_id"] in alice.decrypted, "the answer was not sent encrypted"
    assert "onboarding guide" in answer["content"]["body"]


async def test_a_predetermined_answer_is_given_word_for_word(people, bot):
    alice = await people("alice")
    bot.write_config(
        '[[predetermined]]\npatterns = ["emergency number"]\nanswer = "Call **112**, then extension 4444."',
        allowed_users=[alice.user_id],
    )
    await bot.start()
    room = await room_with_bot(alice, bot)
    question = await alice.say(room, "What is the Emergency Number?", mentions=[bot.user_id])
    content = (await alice.wait_for(room, replies_to(question)))["content"]
    assert content["body"] == "Call **112**, then extension 4444."
    assert "<strong>112</strong>" in content["formatted_body"]
