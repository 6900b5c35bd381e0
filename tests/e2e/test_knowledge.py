"""A source application puts documents through the bot's ingestion API; people ask in a room."""

from __future__ import annotations

import aiohttp
import pytest

from bot.dev.synapse import free_port
from tests.e2e.people import replies_to
from tests.e2e.test_conversation import room_with_bot

pytestmark = pytest.mark.e2e


def knowledge_config(port: int, handbook: str = "") -> str:
    """The ingestion API on `port`, a public handbook (with the keys of `handbook`) and a
    private collection."""
    return f"""
[ingest_api]
enabled = true
port = {port}

[sources.wiki]
token = "wiki-token"

[collections.handbook]
source = "wiki"
public = true
{handbook}

[collections.hr-private]
source = "wiki"
public = false
"""


async def put(port: int, collection: str, doc_id: str, document: dict) -> dict:
    url = f"http://127.0.0.1:{port}/api/v1/collections/{collection}/documents/{doc_id}?wait=true"
    headers = {"Authorization": "Bearer wiki-token"}
    async with aiohttp.ClientSession() as http, http.put(url, json=document, headers=headers) as r:
        assert r.status == 200, await r.text()
        return await r.json()


# The document most end-to-end tests ask about.
TRAVEL_POLICY = "Trains are booked through Travelink two weeks ahead."


async def put_travel_policy(port: int, url: str | None = None) -> dict:
    """The handbook's travel policy (with a link when `url` is given)."""
    document = {"title": "Travel policy", "content": TRAVEL_POLICY}
    return await put(port, "handbook", "travel", {**document, **({"url": url} if url else {})})


async def test_a_put_document_is_cited_in_a_room_and_private_ones_are_not(people, bot):
    alice = await people("alice")
    port = free_port()
    bot.write_config(knowledge_config(port), allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)

    await put(
        port,
        "handbook",
        "travel",
        {
            "title": "Travel policy",
            "url": "https://wiki.example.org/travel",
            "content": "# Travel\n\nTrains are booked through Travelink two weeks ahead.",
        },
    )
    await put(
        port,
        "hr-private",
        "salaries",
        {
            "title": "Salary bands",
            "content": "Travelink bookings by executives are approved by the CFO; salary band E4 is secret.",
        },
    )

    question = await alice.say(room, "how do I book with Travelink?", mentions=[bot.user_id])
    answer = (await alice.wait_for(room, replies_to(question), timeout=60))["content"]
    assert "Trains are booked through Travelink" in answer["body"]
    assert "search-only mode" in answer["body"], "no [llm] configured: the bot says so"
    assert '<a href="https://wiki.example.org/travel">Travel policy</a>' in answer["formatted_body"]
    assert "org.knowledgebot.answer_id" in answer
    assert "E4" not in answer["body"] and "Salary" not in answer["body"]
