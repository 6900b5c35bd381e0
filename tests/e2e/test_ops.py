"""Operations with a real homeserver: /health and /metrics over HTTP, and a shutdown that
tells people about unfinished answers and answers them after the restart."""

from __future__ import annotations

import json
import socket

import aiohttp
import pytest

from bot.dev.synapse import free_port
from core import strings
from tests.e2e.people import membership_of, replies_to
from tests.e2e.scripted import ask, llm_config, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put, put_travel_policy
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
    await put_travel_policy(port)
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
    bot.write_config(
        config,
        allowed_users=[alice.user_id],
        placeholder_after_seconds=0,
        shutdown_grace_seconds=0.5,
    )
    await bot.start()
    room = await room_with_bot(alice, bot)
    await put_travel_policy(port)
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


async def test_an_api_whose_port_is_taken_is_reported_once_and_named_on_health(
    people, bot, tmp_path
):
    """Issue 48: a chat API that could not bind retried for ever, said so only in the
    log. It is told in the admin room with why, /health names it, and the ingestion API
    (another service) serves meanwhile."""
    alice = await people("alice")
    admin_room = await alice.create_room([bot.user_id])
    port, chat, ops = free_port(), free_port(), free_port()
    taken = socket.socket()
    taken.bind(("127.0.0.1", chat))
    taken.listen()
    try:
        bot.write_config(
            knowledge_config(port) + f"[chat_api]\nenabled = true\nport = {chat}\n",
            allowed_users=[alice.user_id],
            admin_room=admin_room,
            ops_port=ops,
        )
        await bot.start()
        await alice.wait_for(admin_room, membership_of(bot.user_id, "join"))
        notice = await alice.wait_for(
            admin_room, lambda e: "chat API" in e["content"].get("body", ""), timeout=60
        )
        body = notice["content"]["body"]
        assert f"127.0.0.1:{chat}" in body and "chat_api.port" in body, body
        assert "in use" in body, body
        status, health = await get(f"http://127.0.0.1:{ops}/health")
        assert status == 503 and '"loop: chat API": "failing"' in health, health
        assert f"127.0.0.1:{chat}" in json.loads(health)["problems"]["loop: chat API"]
        # The other services run on: a document is put and searched.
        await put(
            port,
            "handbook",
            "travel",
            {"title": "Travel policy", "content": "Trains are booked through Travelink."},
        )
        room = await room_with_bot(alice, bot)
        answer = await ask(alice, room, "how are trains booked?", bot)
        assert "Travelink" in answer["body"]
        # Said once: the retries after it add nothing to the admin room.
        await alice.say(admin_room, "sentinel")
        await alice.wait_for(admin_room, lambda e: e["content"].get("body") == "sentinel")
        said = alice.seen(admin_room, lambda e: "chat API" in e["content"].get("body", ""))
        assert len(said) == 1, said
    finally:
        taken.close()
