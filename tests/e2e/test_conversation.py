"""Talking to the bot in real rooms on a real Synapse."""

from __future__ import annotations

import pytest

from tests.e2e.people import from_user, membership_of, replies_to, settle

pytestmark = pytest.mark.e2e


async def room_with_bot(person, bot, **room) -> str:
    room_id = await person.create_room([bot.user_id], **room)
    await person.wait_for(room_id, membership_of(bot.user_id, "join"))
    return room_id


async def test_mention_gets_threaded_notice_and_plain_message_gets_none(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)

    ignored = await alice.say(room, "just chatting among ourselves")
    question = await alice.say(
        room,
        "Knowledge Bot: what is our travel policy?",
        mentions=[bot.user_id],
        html=f'<a href="https://matrix.to/#/{bot.user_id}">Knowledge Bot</a>: what is our travel policy?',
    )

    answer = await alice.wait_for(room, replies_to(question))
    assert answer["sender"] == bot.user_id
    relation = answer["content"]["m.relates_to"]
    assert relation["rel_type"] == "m.thread" and relation["event_id"] == question
    assert "what is our travel policy?" in answer["content"]["body"]
    assert "<blockquote>" in answer["content"]["formatted_body"]
    await settle(alice, room)
    assert alice.seen(room, replies_to(ignored)) == []
    # The bot does not answer itself: one notice per question, no chain of replies.
    assert len(alice.seen(room, from_user(bot.user_id))) == 1 + 2, (
        "the answer and two sentinels' help"
    )


async def test_follow_ups_in_the_bots_thread_and_replies_to_it_are_answered(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)
    question = await alice.say(room, f"{bot.user_id} who approves expenses?")
    answer = await alice.wait_for(room, replies_to(question))

    follow_up = await alice.say(room, "and for travel?", thread=question)
    in_thread = await alice.wait_for(room, replies_to(follow_up))
    assert in_thread["content"]["m.relates_to"]["event_id"] == question

    reply = await alice.say(room, "thanks, one more thing: who signs?", reply_to=answer["event_id"])
    await alice.wait_for(room, replies_to(reply))


async def test_help_lists_the_commands_of_the_room(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)
    command = await alice.say(room, "!help")
    help_text = (await alice.wait_for(room, replies_to(command)))["content"]["body"]
    assert "!help" in help_text and "Mention me" in help_text


async def test_slow_work_posts_a_placeholder_then_edits_it_into_the_answer(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id], placeholder_after_seconds=0)
    await bot.start()
    room = await room_with_bot(alice, bot)
    question = await alice.say(room, "what is the vacation policy?", mentions=[bot.user_id])

    placeholder = await alice.wait_for(room, replies_to(question))
    assert "Working on it" in placeholder["content"]["body"]
    edit = await alice.wait_for(
        room,
        lambda e: (
            e.get("content", {}).get("m.relates_to", {}).get("event_id") == placeholder["event_id"]
        ),
    )
    assert edit["content"]["m.relates_to"]["rel_type"] == "m.replace"
    assert "vacation policy" in edit["content"]["m.new_content"]["body"]


async def test_encrypted_direct_chat_works_both_ways(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot, encrypted=True, direct=True)

    question = await alice.say(room, "where is the onboarding guide?")
    answer = await alice.wait_for(room, replies_to(question))
    assert answer["event_id"] in alice.decrypted, "the answer was not sent encrypted"
    assert "onboarding guide" in answer["content"]["body"]


class BrokenAnswerer:
    """Stands for a pipeline whose LLM or store fails; the bot must still say something."""

    async def answer(self, request, progress=None):
        raise ConnectionError("secret internal detail")


async def test_a_failure_while_answering_gets_a_notice_not_silence(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start(answerer=BrokenAnswerer())
    room = await room_with_bot(alice, bot)
    question = await alice.say(room, "what is the travel policy?", mentions=[bot.user_id])
    notice = (await alice.wait_for(room, replies_to(question)))["content"]["body"]
    assert notice.startswith("⚠️") and "went wrong" in notice and "reference" in notice
    assert "secret internal detail" not in notice


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
