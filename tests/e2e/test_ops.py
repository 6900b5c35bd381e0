"""Operations with a real homeserver: /health and /metrics over HTTP, and a shutdown that
tells people about unfinished answers and answers them after the restart."""

from __future__ import annotations

import aiohttp
import pytest

from bot.dev.synapse import free_port
from core import strings
from tests.e2e.people import replies_to
from tests.e2e.scripted import ask, llm_config, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put
from tests.e2e.test_pipeline import edits_of

pytestmark = pytest.mark.e2e


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.text()


async def test_health_and_metrics_tell_what_works(people, bot, llm):
    alice = await people("alice")
    llm.respond = reading_model
    port, ops = free_port(), free_port()
    config = knowledge_config(port) + llm_config(llm, "timeout_seconds = 30\n")
    bot.write_config(config, allowed_users=[alice.user_id], ops_port=ops)
    await bot.start()
    room = await room_with_bot(alice, bot)
    await put(port, "handbook", "travel", {"title": "Travel policy",
              "content": "Trains are booked through Travelink two weeks ahead."})  # fmt: skip
    status, body = await get(f"http://127.0.0.1:{ops}/health")
    assert status == 200, body
    assert '"sync": "ok"' in body and '"chroma": "ok"' in body and '"llm": "ok"' in body

    answer = await ask(alice, room, "how do I book trains?", bot)
    assert "Travelink" in answer["body"]
    status, text = await get(f"http://127.0.0.1:{ops}/metrics")
    assert status == 200
    assert 'bot_answers_total{kind="answer"} 1.0' in text
    assert 'bot_llm_calls_total{purpose="prestep"} 1.0' in text
    assert 'bot_step_seconds_count{step="retrieve"}' in text

    await llm.close()
    status, body = await get(f"http://127.0.0.1:{ops}/health")
    assert status == 503 and '"llm": "failing"' in body and '"sync": "ok"' in body


async def test_a_shutdown_tells_about_unfinished_answers_and_answers_after_restart(
    people, bot, llm
):
    alice = await people("alice")
    llm.respond = reading_model
    port = free_port()
    config = knowledge_config(port) + llm_config(llm, "timeout_seconds = 30\n")
    bot.write_config(config, allowed_users=[alice.user_id], placeholder_after_seconds=0,
                     shutdown_grace_seconds=0.5)  # fmt: skip
    await bot.start()
    room = await room_with_bot(alice, bot)
    await put(port, "handbook", "travel", {"title": "Travel policy",
              "content": "Trains are booked through Travelink two weeks ahead."})  # fmt: skip
    llm.delay = 20
    question = await alice.say(room, "how do I book trains?", mentions=[bot.user_id])
    placeholder = await alice.wait_for(room, replies_to(question), timeout=30)
    assert placeholder["content"]["body"] == strings.PLACEHOLDER

    await bot.stop()
    interrupted = await alice.wait_for(
        room,
        lambda e: (
            edits_of(placeholder["event_id"])(e)
            and e["content"]["m.new_content"]["body"] == strings.INTERRUPTED
        ),
        timeout=30,
    )
    assert interrupted
    llm.delay = 0
    await bot.start()

    def reads(event: dict) -> str:
        content = event["content"]
        return content.get("m.new_content", content).get("body", "")

    final = await alice.wait_for(
        room,
        lambda e: edits_of(placeholder["event_id"])(e) and "Travelink" in reads(e),
        timeout=60,
    )
    assert reads(final).startswith("From the document"), "answered after the restart"
    assert len(alice.seen(room, replies_to(question))) == 1, "in the same message"
