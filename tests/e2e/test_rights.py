"""In real rooms: what the bot shows depends on everyone who will read it."""

from __future__ import annotations

import jwt
import pytest

from bot.dev.synapse import free_port
from core.ids import localpart_of
from tests.e2e.people import membership_of, replies_to
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import put
from tests.rights.conftest import keys_toml, write_key

pytestmark = pytest.mark.e2e


def wiki_config(wiki, tmp_path, port: int) -> str:
    """The ingestion API on `port` and a restricted `wiki` collection whose application
    verifies every reader's token against the bot's published keys."""
    key = write_key(tmp_path / "bot.pem")
    wiki.jwks_url = f"http://127.0.0.1:{port}/api/v1/jwks.json"
    return f"""
{keys_toml(("bot-1", "EdDSA", key))}
[ingest_api]
enabled = true
port = {port}

[sources.wiki]
token = "wiki-token"
rights_url = "{wiki.url}"
[sources.wiki.readers]
rule = "localpart"
homeserver = "localhost"

[collections.wiki]
source = "wiki"
"""


async def test_a_private_document_shows_in_a_direct_chat_but_not_where_others_read(
    people, bot, wiki, tmp_path
):
    alice, bob = await people("alice"), await people("bob")
    port = free_port()
    bot.write_config(wiki_config(wiki, tmp_path, port), allowed_users=[alice.user_id])
    wiki.acl = {localpart_of(alice.user_id): {("wiki", "budget")}}
    await bot.start()
    await put(
        port,
        "wiki",
        "budget",
        {"title": "Budget 2027", "content": "The travel budget for 2027 is 42,000 euros."},
    )

    direct = await room_with_bot(alice, bot, direct=True)
    question = await alice.say(direct, "what is the travel budget?")
    answer = (await alice.wait_for(direct, replies_to(question), timeout=60))["content"]["body"]
    assert "42,000 euros" in answer

    group = await alice.create_room([bot.user_id, bob.user_id])
    await bob.client.join(group)
    await alice.wait_for(group, membership_of(bob.user_id, "join"))
    await alice.wait_for(group, membership_of(bot.user_id, "join"))
    question = await alice.say(group, "what is the travel budget?", mentions=[bot.user_id])
    answer = (await alice.wait_for(group, replies_to(question), timeout=60))["content"]["body"]
    assert "42,000" not in answer and "Budget 2027" not in answer
    assert "found nothing" in answer
    assert wiki.rejected == [], "the application accepted every token it was sent"
    asked = [
        jwt.decode(token, options={"verify_signature": False})["sub"]
        for request in wiki.requests
        for token in request["tokens"]
    ]
    assert asked == [localpart_of(alice.user_id), localpart_of(bob.user_id)], "alice was cached"
