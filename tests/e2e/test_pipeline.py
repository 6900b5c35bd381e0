"""The LLM pipeline in a real room: streamed into one message, cited, badged; or an apology."""

from __future__ import annotations

import pytest

from bot.dev.synapse import free_port
from bot.inbox.reply import STREAMING_MARK
from core import strings
from tests.e2e.people import replies_to
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put_travel_policy
from tests.pipeline.conftest import verdict

pytestmark = pytest.mark.e2e


def edits_of(event_id: str):
    return lambda e: (
        e.get("content", {}).get("m.relates_to", {}).get("event_id") == event_id
        and e["content"]["m.relates_to"].get("rel_type") == "m.replace"
    )


async def test_an_answer_streams_into_one_message_with_links_and_a_badge(people, bot, llm):
    alice = await people("alice")
    port = free_port()
    bot.write_config(
        knowledge_config(port)
        + f'[llm]\nurl = "{llm.url}"\nmodel = "test-model"\nmax_retries = 0\n'
        + "[pipeline]\nstream_edit_seconds = 0.2\n",
        allowed_users=[alice.user_id],
        placeholder_after_seconds=0,
    )
    await bot.start()
    room = await room_with_bot(alice, bot)
    await put_travel_policy(port, url="https://wiki/travel")
    llm.delay = 0.3
    llm.enqueue(verdict())
    llm.enqueue(
        "Trains are booked through Travelink [1], at least two weeks ahead of the trip, says the policy."
    )
    llm.enqueue({"risk": "low"})

    question = await alice.say(room, "how do I book a train?", mentions=[bot.user_id])
    first = await alice.wait_for(room, replies_to(question), timeout=60)
    badge = await alice.wait_for(
        room,
        lambda e: (
            edits_of(first["event_id"])(e)
            and strings.SUPPORT_BADGES["low"] in e["content"]["m.new_content"]["body"]
        ),
        timeout=60,
    )
    final = badge["content"]["m.new_content"]
    assert final["body"].startswith("Trains are booked through Travelink [1], at least two weeks")
    assert '<a href="https://wiki/travel">Travel policy</a>' in final["formatted_body"]
    assert final["org.knowledgebot.answer_id"]
    assert len(alice.seen(room, replies_to(question))) == 1, "one message, edited; not a trail"
    # The asker is notified once, by the edit that completes the answer.
    mentions = [
        (e["content"]["m.new_content"]["body"], e["content"]["m.mentions"])
        for e in alice.seen(room, edits_of(first["event_id"]))
    ]
    notifying = [body for body, mentioned in mentions if mentioned]
    assert len(notifying) == 1 and not notifying[0].endswith(STREAMING_MARK)
    assert strings.SUPPORT_BADGES["low"] not in notifying[0]
    assert dict(mentions)[notifying[0]] == {"user_ids": [alice.user_id]}


async def test_a_model_that_is_down_gets_an_apology_not_silence(people, bot, llm):
    alice = await people("alice")
    port = free_port()
    bot.write_config(
        knowledge_config(port)
        + f'[llm]\nurl = "{llm.url}"\nmodel = "test-model"\nmax_retries = 0\n',
        allowed_users=[alice.user_id],
    )
    await bot.start()
    room = await room_with_bot(alice, bot)
    await put_travel_policy(port, url="https://wiki/travel")
    llm.enqueue(status=503)  # the pre-step: the question goes on as asked
    llm.enqueue(status=503)  # the answer: the passages found, under what happened
    question = await alice.say(room, "how do I book a train?", mentions=[bot.user_id])
    notice = (await alice.wait_for(room, replies_to(question), timeout=60))["content"]["body"]
    assert notice.startswith(strings.LLM_SERVER_ERROR + "\n\n"), "a 503 is no time-out"
    assert strings.LLM_FALLBACK_INTRO in notice and "through Travelink two weeks" in notice
