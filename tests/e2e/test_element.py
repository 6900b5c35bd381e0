"""What Element users do: edit a message to add the bot's mention, reply from a client
that quotes the answer (a reply fallback), and read an answer citing two passages of one
document."""

from __future__ import annotations

import pytest

from tests.e2e.people import from_user, replies_to
from tests.e2e.scripted import ask, reading_model, start_alice_and_bot
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import put

pytestmark = pytest.mark.e2e


async def test_an_edit_that_adds_the_mention_is_answered_in_the_original_thread(people, bot, llm):
    alice, _ = await start_alice_and_bot(people, bot, llm)
    room = await room_with_bot(alice, bot)
    original = await alice.say(room, "what is the travel policy?")
    asked = "Knowledge Bot: what is the travel policy?"
    edit = await alice.send(
        room,
        {
            "msgtype": "m.text",
            "body": f"* {asked}",
            "m.new_content": {
                "msgtype": "m.text",
                "body": asked,
                "m.mentions": {"user_ids": [bot.user_id]},
            },
            "m.mentions": {"user_ids": [bot.user_id]},
            "m.relates_to": {"rel_type": "m.replace", "event_id": original},
        },
    )
    answer = await alice.wait_for(room, replies_to(original), timeout=60)
    assert answer["content"]["m.relates_to"]["event_id"] == original, "in the original's thread"
    assert not alice.seen(room, replies_to(edit))
    # A later edit that does not newly mention the bot is no new question.
    await alice.send(
        room,
        {
            "msgtype": "m.text",
            "body": f"* {asked} (typo fixed)",
            "m.new_content": {
                "msgtype": "m.text",
                "body": f"{asked} (typo fixed)",
                "m.mentions": {"user_ids": [bot.user_id]},
            },
            "m.mentions": {},
            "m.relates_to": {"rel_type": "m.replace", "event_id": original},
        },
    )
    sentinel = await ask(alice, room, "!help", bot)
    assert sentinel["body"]
    assert len(alice.seen(room, replies_to(original))) == 1


async def test_a_reply_fallback_is_not_kept_in_the_conversation(people, bot, llm):
    alice, port = await start_alice_and_bot(people, bot, llm)
    room = await room_with_bot(alice, bot)
    await put(
        port,
        "handbook",
        "leave",
        {
            "title": "Annual leave",
            "content": "Full-time staff have 27 days of annual leave. Part-time staff have 15 days.",
        },
    )
    first = await ask(alice, room, "how many leave days do full-time staff get?", bot)
    answer = alice.seen(
        room, lambda e: from_user(bot.user_id)(e) and "m.new_content" not in e["content"]
    )[-1]
    quoted = "\n".join(f"> {line}" for line in f"<{bot.user_id}> {first['body']}".splitlines())
    reply = await alice.say(room, f"{quoted}\n\nthanks, noted", reply_to=answer["event_id"])
    await alice.wait_for(room, replies_to(reply), timeout=60)
    await ask(alice, room, "again please", bot)
    prompts = [h["messages"][1]["content"] for h in llm.history if "response_format" in h]
    conversation = prompts[-1].split("<conversation>\n", 1)[1].split("</conversation>")[0]
    assert f"{alice.user_id}: thanks, noted" in conversation
    assert "> <" not in conversation and "&gt; &lt;" not in conversation


async def test_an_answer_citing_two_passages_of_one_document_lists_it_once(people, bot, llm):
    alice, port = await start_alice_and_bot(people, bot, llm)
    room = await room_with_bot(alice, bot)
    await put(
        port,
        "handbook",
        "travel",
        {
            "title": "Travel policy",
            "format": "markdown",
            "url": "https://wiki/travel",
            "content": "# Trains\n\nTrains are booked through Travelink two weeks ahead.\n\n"
            "# Hotels\n\nHotels are booked through Roomly, breakfast included.",
        },
    )

    def cite_all(body: dict) -> str | dict:
        if "response_format" in body:
            return reading_model(body)
        count = body["messages"][1]["content"].count("<source ")
        return " ".join(f"Passage {n} [{n}]." for n in range(1, count + 1))

    llm.respond = cite_all
    answer = await ask(alice, room, "how are trains and hotels booked through Travelink?", bot)
    given = llm.history[-1]["messages"][1]["content"].count('title="Travel policy')
    assert given >= 2, "both passages of the document were given to the model"
    listed = answer["body"].split("**Sources**", 1)[1]
    assert listed.count("Travel policy") == 1, listed
    assert "[2]" not in answer["body"].split("**Sources**")[0], "one number per document"


async def test_the_first_message_of_a_new_dm_sent_before_the_bot_joins_is_answered(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    await bot.stop()  # the bot is down (busy, restarting) when alice starts the chat
    room = await alice.create_room([bot.user_id], direct=True)
    first = await alice.say(room, "what is the travel policy?")
    await bot.start()
    answer = await alice.wait_for(room, replies_to(first), timeout=60)
    assert "travel policy" in answer["content"]["body"]
