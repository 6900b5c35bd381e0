"""Feedback in real rooms: react, react again, remove, react to a non-answer, restart, and
the admins' report, refused to others."""

from __future__ import annotations

import json

import pytest

from bot.dev.synapse import free_port
from bot.inbox.links import build_room_link
from core import strings
from tests.e2e.people import bring_in, from_user, replies_to
from tests.e2e.scripted import ask, finished_reply, llm_config, reading_model, start_alice_and_bot
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put

pytestmark = pytest.mark.e2e
THUMBS_UP_MEDIUM = "\U0001f44d\U0001f3fd"
THUMBS_DOWN = "\U0001f44e"


async def report_until(admin, room, bot, expected: str, timeout: float = 30) -> str:
    """Ask for the report until it shows `expected` (votes are recorded as they arrive)."""
    for _ in range(int(timeout)):
        text = (await ask(admin, room, "!feedback", bot))["body"]
        if expected in text:
            return text
    raise AssertionError(f"the report never showed {expected!r}; last:\n{text}")


async def test_votes_are_kept_withdrawn_persisted_and_reported_to_admins_only(people, bot, llm):
    alice, admin = await people("alice"), await people("admin")
    llm.respond = reading_model
    port = free_port()
    admin_room = await admin.create_room([bot.user_id])

    def configure() -> None:
        bot.write_config(
            knowledge_config(port)
            + llm_config(llm)
            + f"[feedback]\nadmins = ['{admin.user_id}']\n",
            allowed_users=[alice.user_id, admin.user_id],
            admin_room=admin_room,
        )

    configure()
    await bot.start()
    await admin.wait_for(admin_room, lambda e: e.get("state_key") == bot.user_id)
    room = await room_with_bot(alice, bot)
    # The admin reads alice's room, so the report may show its answers in detail.
    await bring_in(room, alice, admin)
    await put(
        port,
        "handbook",
        "travel",
        {
            "title": "Travel policy",
            "url": "https://wiki/t",
            "content": "Trains are booked through Travelink two weeks ahead.",
        },
    )

    question = await alice.say(room, "how do I book trains?", mentions=[bot.user_id])
    answer = await alice.wait_for(room, replies_to(question), timeout=60)
    await ask(admin, admin_room, "!feedback", bot)  # the answer is finished meanwhile
    await alice.react(room, answer["event_id"], THUMBS_UP_MEDIUM)
    await report_until(admin, admin_room, bot, f"| {build_room_link(room, bot.user_id)} | 1 / 0 |")

    down = await alice.react(room, answer["event_id"], THUMBS_DOWN)
    asked = await alice.wait_for(
        room, lambda e: e["content"].get("body") == strings.FEEDBACK_ASK, timeout=30
    )
    assert (
        asked["content"]["m.relates_to"]["event_id"]
        == answer["content"]["m.relates_to"]["event_id"]
    ), "asked in the answer's thread"
    thread = asked["content"]["m.relates_to"]["event_id"]
    reply = await alice.say(room, "the link is dead", thread=thread, reply_to=asked["event_id"])
    thanks = await alice.wait_for(room, replies_to(reply), timeout=30)
    assert thanks["content"]["body"] == strings.FEEDBACK_THANKS
    report = await report_until(
        admin, admin_room, bot, f"| {build_room_link(room, bot.user_id)} | 0 / 1 |"
    )
    assert "“how do I book trains?”" in report and "Travel policy (handbook/travel" in report
    assert "the link is dead" in report

    await alice.redact(room, down)
    await report_until(admin, admin_room, bot, f"| {build_room_link(room, bot.user_id)} | 1 / 0 |")
    await alice.react(room, asked["event_id"], THUMBS_DOWN)
    await alice.react(room, question, THUMBS_DOWN)

    await bot.stop()
    await bot.start()
    report = await report_until(
        admin, admin_room, bot, f"| {build_room_link(room, bot.user_id)} | 1 / 0 |"
    )
    assert strings.FEEDBACK_NO_WORST in report, "reactions on other messages were ignored"
    assert not alice.seen(room, lambda e: e["content"].get("body") == strings.FEEDBACK_ASK)[1:]

    refused = await ask(alice, room, "!feedback", bot)
    assert refused["body"] == strings.FEEDBACK_REFUSED
    exported = await ask(admin, admin_room, "!feedback export", bot)
    assert exported["body"] == strings.FEEDBACK_EXPORTED.format(
        count=1, name="feedback-last-30-days.jsonl"
    )
    files = admin.seen(admin_room, lambda e: e["content"].get("msgtype") == "m.file")
    assert files and files[0]["content"]["body"] == "feedback-last-30-days.jsonl"
    assert from_user(bot.user_id)(files[0])
    downloaded = await admin.client.download(mxc=files[0]["content"]["url"])
    [line] = downloaded.body.decode().splitlines()
    record = json.loads(line)
    assert record["question"] == "how do I book trains?" and record["model"] == "test-model"
    assert record["votes"][0]["vote"] == "up" and record["comments"] == ["the link is dead"]
    assert record["sources"][0]["document_id"] == "travel" and record["sources"][0]["score"]


async def test_a_vote_in_an_encrypted_room_counts_too(people, bot, llm):
    alice, port = await start_alice_and_bot(people, bot, llm)
    room = await room_with_bot(alice, bot, encrypted=True)
    await put(
        port,
        "handbook",
        "travel",
        {
            "title": "Travel policy",
            "content": "Trains are booked through Travelink two weeks ahead.",
        },
    )
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
