"""A Chroma server that goes away while people ask, and comes back: the same bot process
answers before, tells people it cannot search during the outage (and still answers from
the room's memories), keeps documents sent meanwhile queued, and recovers by itself."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import aiohttp
import pytest

from bot.dev.synapse import free_port
from core import strings
from tests.e2e.scripted import ask, llm_config, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put_travel_policy
from tests.e2e.test_ops import get
from tests.support.chroma_server import ChromaServer

pytestmark = pytest.mark.e2e


@pytest.fixture
def chroma(tmp_path: Path):
    server = ChromaServer(tmp_path / "chroma")
    server.start()
    yield server
    server.kill()


def memory_reading_model(body: dict) -> str | dict:
    """The reading model, which also answers from the room's memories when no source is
    given (as a model told to answer only from them does)."""
    user = body["messages"][1]["content"]
    if "response_format" in body or "<source " in user or "<memory" not in user:
        return reading_model(body)
    memory = user.split("<memory", 1)[1].split(">", 1)[1].split("</memory>", 1)[0]
    return f"From what this room asked me to remember: {memory}"


async def state_of(port: int, doc_id: str) -> str:
    url = f"http://127.0.0.1:{port}/api/v1/collections/handbook/documents/{doc_id}"
    headers = {"Authorization": "Bearer wiki-token"}
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as response:
        return (await response.json())["state"]


async def test_the_same_bot_answers_before_during_and_after_a_chroma_outage(
    people, bot, llm, chroma
):
    alice = await people("alice")
    llm.respond = memory_reading_model
    port, ops = free_port(), free_port()
    bot.write_config(
        knowledge_config(port) + f'[knowledge]\nchroma_url = "{chroma.url}"\n' + llm_config(llm),
        allowed_users=[alice.user_id],
        ops_port=ops,
    )
    await bot.start()
    room = await room_with_bot(alice, bot)
    await put_travel_policy(port)
    before = await ask(alice, room, "how are trains booked?", bot)
    assert "Travelink" in before["body"]

    chroma.kill()
    during = await ask(alice, room, "how are trains booked?", bot)
    assert during["body"] == strings.SEARCH_UNAVAILABLE
    kept = await ask(alice, room, "remember that the Atlas code freeze starts on 10 December", bot)
    assert kept["body"].startswith("Noted")
    from_memory = await ask(alice, room, "when does the Atlas code freeze start?", bot)
    assert "10 December" in from_memory["body"]
    assert strings.SEARCH_PARTLY_UNAVAILABLE in from_memory["body"]
    status, body = await get(f"http://127.0.0.1:{ops}/health")
    assert status == 503 and json.loads(body)["checks"]["chroma"] == "failing"
    url = f"http://127.0.0.1:{port}/api/v1/collections/handbook/documents/hotels"
    document = {"title": "Hotels", "content": "Hotels are booked through Roomly, not Travelink."}
    async with aiohttp.ClientSession() as http:
        queued = await http.put(url, json=document, headers={"Authorization": "Bearer wiki-token"})
        assert queued.status == 202
    assert await state_of(port, "hotels") == "queued"

    chroma.start()
    deadline = time.monotonic() + 60
    while await state_of(port, "hotels") != "indexed":
        assert time.monotonic() < deadline, "the document queued during the outage was not indexed"
        await asyncio.sleep(0.5)
    after = await ask(alice, room, "how are hotels booked?", bot)
    assert "Roomly" in after["body"]
    again = await ask(alice, room, "how are trains booked?", bot)
    assert "Travelink" in again["body"]
    status, body = await get(f"http://127.0.0.1:{ops}/health")
    assert json.loads(body)["checks"]["chroma"] == "ok"
