"""Summaries in real rooms with a model: a decision the messages do not say is left out;
a scheduled summary that becomes knowledge of its room only, and no duplicate on restart;
encrypted rooms read back. (!summarize's links, ranges in words, threads and what it
leaves out, without a model: tests/bot/test_summaries.py, on the fake account.)"""

from __future__ import annotations

import re

import pytest

from bot.dev.synapse import free_port
from bot.inbox.links import build_permalink
from core import strings
from tests.e2e.people import from_user, membership_of, nothing_found, replies_to
from tests.e2e.scripted import ask, llm_config, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config
from tests.e2e.test_pipeline import edits_of

pytestmark = pytest.mark.e2e
LINE = re.compile(r"^\[(\d+)\] (\S+) \([^)]*\): (.*)$", re.M)


def chat_model(body: dict) -> str | dict:
    """Summarises by reading its messages: "Decision:" lines are decisions, "I will"
    lines action items of their sender, questions open questions."""
    schema = body.get("response_format", {}).get("json_schema", {}).get("name")
    user = body["messages"][1]["content"]
    if schema != "summary":
        return reading_model(body)
    found = LINE.findall(user)
    return {
        "tldr": f"{len(found)} messages.",
        "decisions": [
            {"text": t.removeprefix("Decision: "), "messages": [int(n)]}
            for n, _, t in found
            if t.startswith("Decision:")
        ],
        "action_items": [
            {"text": t, "owner": s, "due": "Friday" if "Friday" in t else "", "messages": [int(n)]}
            for n, s, t in found
            if t.startswith("I will")
        ],
        "open_questions": [
            {"text": t, "messages": [int(n)]} for n, _, t in found if t.endswith("?")
        ],
    }


def config(llm, port: int, extra: str = "") -> str:
    return knowledge_config(port) + llm_config(llm) + extra


def inventing_model(body: dict) -> str | dict:
    """The chat model, which also invents a decision about Atlas that no message says;
    the support check reads the cited messages (tests/e2e/scripted.py)."""
    found = chat_model(body)
    if isinstance(found, dict) and any("Atlas" in d["text"] for d in found.get("decisions", [])):
        invented = {"text": "The Atlas budget doubles next quarter", "messages": [1]}
        found["decisions"].append(invented)
    return found


async def test_a_decision_the_messages_do_not_say_is_left_out_of_the_summary(people, bot, llm):
    alice = await people("alice")
    llm.respond = inventing_model
    bot.write_config(config(llm, free_port()), allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)
    await alice.say(room, "Decision: we ship Atlas on 14 December")
    await alice.say(room, "I will write the release notes by Friday")
    checked = await ask(alice, room, "!summarize", bot)
    assert "we ship Atlas on 14 December" in checked["body"]
    assert "budget doubles" not in checked["body"]
    assert strings.SUMMARY_POINTS_DROPPED.format(count=1) in checked["body"]

    await alice.say(room, "Decision: the freeze starts on 10 December")
    faithful = await ask(alice, room, "!summarize", bot)
    assert "the freeze starts on 10 December" in faithful["body"]
    assert "left out" not in faithful["body"], "nothing invented, nothing left out"
    assert not any(badge in faithful["body"] for badge in strings.SUPPORT_BADGES.values())


async def test_a_scheduled_summary_is_knowledge_of_its_room_only_and_not_repeated(people, bot, llm):
    alice, bob = await people("alice"), await people("bob")
    llm.respond = chat_model
    extra = (
        '[sources.matrix]\ntoken = "matrix-token"\n'
        '[collections.room-summaries]\nsource = "matrix"\n'
        '[summaries]\ncollection = "room-summaries"\npost_in_room = true\n'
    )
    bot.write_config(
        config(llm, free_port(), extra),
        allowed_users=[alice.user_id, bob.user_id],
    )
    text = bot.config_path.read_text().replace(
        "[invites]", '[room_defaults]\nsummary_schedule = "every 10s"\n\n[invites]'
    )
    bot.config_path.write_text(text)
    await bot.start()
    room = await room_with_bot(alice, bot)
    elsewhere = await room_with_bot(bob, bot)
    await alice.say(room, "Decision: the Atlas launch moves to 14 December")
    await alice.say(room, "I will tell the customers by Friday")

    def posted(event: dict) -> bool:
        body = event.get("content", {}).get("body", "")
        return from_user(bot.user_id)(event) and body.startswith("**Summary of this room")

    summary = await alice.wait_for(room, posted, timeout=90)
    assert "the Atlas launch moves to 14 December" in summary["content"]["body"]

    answer = await ask(alice, room, "when does the Atlas launch move to?", bot)
    assert "14 December" in answer["body"] and "Summary of" in answer["body"]
    outside = await ask(bob, elsewhere, "when does the Atlas launch move to?", bot)
    assert outside["body"] == nothing_found()

    await bot.stop()
    await bot.start()
    await alice.say(room, "Decision: the launch party stays small")

    def bodies(where: str, person) -> list[str]:
        return [event["content"]["body"] for event in person.seen(where, posted)]

    await alice.wait_until(
        lambda: any("the launch party stays small" in body for body in bodies(room, alice)),
        timeout=90,
    )
    # A later decision's summary is the sentinel: the runs before it (also those with
    # nothing new) are over, and it must say only what is new.
    await alice.say(room, "Decision: the launch venue is the Lisbon office")
    await alice.wait_until(
        lambda: any("Lisbon office" in body for body in bodies(room, alice)), timeout=90
    )
    [latest] = [b for b in bodies(room, alice) if "Lisbon office" in b]
    assert "14 December" not in latest and "stays small" not in latest
    decided = [b for b in bodies(room, alice) if "the Atlas launch moves to 14 December" in b]
    assert len(decided) == 1, "each run summarises only what is new since the last one"
    assert len([b for b in bodies(room, alice) if "stays small" in b]) == 1
    assert bodies(elsewhere, bob) == [], "bob's question and its answer are no summary's"


async def test_an_encrypted_room_is_read_back_and_summarised(people, bot, llm):
    alice = await people("alice")
    llm.respond = chat_model
    bot.write_config(config(llm, free_port()), allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot, encrypted=True)
    said = await alice.say(room, "Decision: the archive moves to cold storage in January")
    question = await alice.say(room, "!summarize", mentions=[bot.user_id])
    reply = await alice.wait_for(room, replies_to(question), timeout=60)
    assert reply["event_id"] in alice.decrypted, "the summary was sent encrypted"

    def final(event: dict) -> bool:
        ours = event["event_id"] == reply["event_id"] or edits_of(reply["event_id"])(event)
        return ours and "cold storage" in str(event["content"])

    summary = await alice.wait_for(room, final, timeout=60)
    text = summary["content"].get("m.new_content", summary["content"])
    assert "the archive moves to cold storage in January" in text["body"]
    assert build_permalink(room, said, alice.user_id) in text["formatted_body"]


async def test_messages_sent_before_the_bot_joined_an_encrypted_room_are_counted(people, bot, llm):
    """Issue 46: the keys of messages sent before the bot was invited were never shared
    with it; a summary covering them says how many it could not read instead of
    summarising the gap as if it were the whole."""
    alice, bob = await people("alice"), await people("bob")
    llm.respond = chat_model
    bot.write_config(config(llm, free_port()), allowed_users=[alice.user_id])
    await bot.start()
    room = await alice.create_room([bob.user_id], encrypted=True, visibility="shared")
    await bob.wait_until(lambda: room in bob.client.invited_rooms)
    await bob.join(room)
    await alice.wait_for(room, membership_of(bob.user_id, "join"))
    said = [
        await bob.say(room, text)
        for text in ("Decision: the budget is frozen", "The audit is on Monday", "Bring badges")
    ]
    await alice.wait_for(room, lambda e: e["event_id"] == said[-1])
    # Bob's device goes away: nobody will ever share his keys with the bot.
    await bob.close()
    await alice.invite(room, bot.user_id)
    await alice.wait_for(room, membership_of(bot.user_id, "join"))
    await alice.say(room, "Decision: the archive moves to cold storage in January")
    question = await alice.say(room, "!summarize", mentions=[bot.user_id])
    first = await alice.wait_for(room, replies_to(question), timeout=60)

    def final(event: dict) -> bool:
        ours = event["event_id"] == first["event_id"] or edits_of(first["event_id"])(event)
        return ours and "cold storage" in str(event["content"])

    summary = await alice.wait_for(room, final, timeout=60)
    body = summary["content"].get("m.new_content", summary["content"])["body"]
    assert "cold storage" in body and "budget is frozen" not in body
    assert body.endswith(strings.UNREADABLE_MESSAGES.format(count=3)), body
