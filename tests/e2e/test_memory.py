"""Memory in real rooms: the room's discussion recalled later, memories kept per room,
follow-ups read with the previous turn, and a toxic turn that suspends memory."""

from __future__ import annotations

import re

import pytest

from bot.dev.synapse import free_port
from bot.reply import STREAMING_MARK
from core import strings
from core.strings import PLACEHOLDER
from tests.e2e.people import replies_to
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put
from tests.e2e.test_pipeline import edits_of
from tests.pipeline.conftest import verdict

pytestmark = pytest.mark.e2e
SOURCE = re.compile(r'<source n="(\d+)" kind="([^"]+)" title="[^"]*">\n(.*?)\n</source>', re.S)


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def reading_model(body: dict) -> str | dict:
    """A scripted model that reads its prompt: the pre-step grades "parasites" as toxic
    and makes an amend follow-up stand-alone from the conversation; the answer quotes
    the source line that shares most words with the question."""
    schema = body.get("response_format", {}).get("json_schema", {}).get("name")
    user = body["messages"][1]["content"]
    if schema == "prestep":
        question = user.rsplit("Message: ", 1)[1]
        conversation = user.split("<conversation>\n", 1)[1].split("</conversation>")[0].strip()
        asked = [line.split(": ", 1)[1] for line in conversation.splitlines() if "?" in line]
        rewrite = f"{asked[-1]} ({question})" if asked and "also" in question else question
        toxicity = 8 if "parasites" in question else 0
        return verdict(toxicity=toxicity, standalone_question=rewrite)
    if schema == "support":
        return {"risk": "low"}
    question = words(user.rsplit("Question: ", 1)[1])
    best = max(
        ((number, kind, line) for number, kind, text in SOURCE.findall(user)
         for line in text.splitlines()),
        key=lambda found: len(words(found[2]) & question),
        default=None,
    )  # fmt: skip
    if best is None:
        return "I found nothing."
    number, kind, line = best
    return f"From the {kind}: {line.split(': ', 1)[-1]} [{number}]"


async def ask(person, room, text, bot, timeout=60) -> dict:
    """The bot's reply as it reads once finished (streamed answers are edited)."""
    question = await person.say(room, text, mentions=[bot.user_id])
    first = await person.wait_for(room, replies_to(question), timeout=timeout)

    def finished(event: dict) -> dict | None:
        if event["event_id"] == first["event_id"]:
            content = event["content"]
        elif edits_of(first["event_id"])(event):
            content = event["content"]["m.new_content"]
        else:
            return None
        streaming = content["body"].endswith(STREAMING_MARK) or content["body"] == PLACEHOLDER
        return None if streaming else content

    final = await person.wait_for(room, lambda e: finished(e) is not None, timeout=timeout)
    return finished(final)


async def start(people, bot, llm):
    alice = await people("alice")
    llm.respond = reading_model
    port = free_port()
    bot.write_config(
        knowledge_config(port)
        + f'[llm]\nurl = "{llm.url}"\nmodel = "test-model"\nmax_retries = 0\n'
        + "[pipeline]\nsupport_check = false\n",
        allowed_users=[alice.user_id],
    )
    await bot.start()
    return alice, port


async def test_a_room_recalls_its_own_discussion_and_memories_and_never_another_rooms(
    people, bot, llm
):
    alice, _ = await start(people, bot, llm)
    room_a = await room_with_bot(alice, bot)
    fact = await alice.say(room_a, "Decision: the Atlas release train leaves on 14 December")
    for line in ["ok", "noted", "lunch at noon?", "sure", "the build is green", "great", "thanks"]:
        await alice.say(room_a, line)
    kept = await ask(
        alice, room_a, "remember that the Atlas code freeze starts on 10 December", bot
    )
    assert kept["body"].startswith("Noted: I'll remember this for this room")
    listed = await ask(alice, room_a, "!memory", bot)
    assert "1. The Atlas code freeze starts on 10 December" in listed["body"]
    for other in ["hello", "what is the weather policy?"]:
        await ask(alice, room_a, other, bot)

    recalled = await ask(alice, room_a, "when does the Atlas release train leave?", bot)
    assert "the Atlas release train leaves on 14 December" in recalled["body"]
    assert "Earlier discussion in this room" in recalled["body"]
    assert (
        f"https://matrix.to/#/{room_a.replace('!', '%21')}/{fact.replace('$', '%24')}"
        in (recalled["formatted_body"])
    )
    freeze = await ask(alice, room_a, "when does the Atlas code freeze start?", bot)
    assert "10 December" in llm.history[-1]["messages"][1]["content"]
    assert freeze["body"]

    room_b = await room_with_bot(alice, bot)
    calls_before = len(llm.history)
    elsewhere = await ask(alice, room_b, "when does the Atlas release train leave?", bot)
    assert elsewhere["body"] == strings.NOTHING_FOUND
    prompts = " ".join(str(call["messages"]) for call in llm.history[calls_before:])
    assert "14 December" not in prompts and "10 December" not in prompts
    assert (await ask(alice, room_b, "!memory", bot))["body"] == strings.MEMORY_EMPTY
    forgotten = await ask(alice, room_a, "!forget 1", bot)
    assert forgotten["body"] == strings.FORGOTTEN.format(count=1)
    assert (await ask(alice, room_a, "!memory", bot))["body"] == strings.MEMORY_EMPTY


async def test_follow_ups_use_the_previous_turn_unless_it_was_toxic(people, bot, llm):
    alice, port = await start(people, bot, llm)
    room = await room_with_bot(alice, bot)
    await put(port, "handbook", "leave", {"title": "Annual leave", "content":
              "Full-time staff have 27 days of annual leave. Part-time staff have 15 days."})  # fmt: skip

    def prestep_conversation() -> str:
        prompts = [h["messages"][1]["content"] for h in llm.history if "response_format" in h]
        return prompts[-1].split("<conversation>\n", 1)[1].split("</conversation>")[0].strip()

    await ask(alice, room, "how many leave days do full-time staff get?", bot)
    amended = await ask(alice, room, "also for part-time staff", bot)
    assert "how many leave days do full-time staff get?" in prestep_conversation()
    assert (
        "Question: how many leave days do full-time staff get? (also for part-time staff)"
        in (llm.history[-1]["messages"][1]["content"])
    )
    assert "Part-time staff have 15 days" in amended["body"]

    toxic = await ask(alice, room, "HR are parasites, how many leave days do they get?", bot)
    assert toxic["body"] == strings.TOXIC_DECLINED
    await ask(alice, room, "again please", bot)
    assert prestep_conversation() == "", "nothing of the toxic turn comes with the next one"
