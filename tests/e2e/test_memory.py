"""Memory in real rooms: the room's discussion recalled later, memories kept per room,
follow-ups read with the previous turn, and a toxic turn that suspends memory."""

from __future__ import annotations

import pytest

from core import strings
from tests.e2e.people import nothing_found
from tests.e2e.scripted import ask, start_alice_and_bot
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import put

pytestmark = pytest.mark.e2e


async def test_a_room_recalls_its_own_discussion_and_memories_and_never_another_rooms(
    people, bot, llm
):
    alice, _ = await start_alice_and_bot(people, bot, llm)
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
    assert elsewhere["body"] == nothing_found()
    prompts = " ".join(str(call["messages"]) for call in llm.history[calls_before:])
    assert "14 December" not in prompts and "10 December" not in prompts
    assert (await ask(alice, room_b, "!memory", bot))["body"] == strings.MEMORY_EMPTY
    forgotten = await ask(alice, room_a, "!forget 1", bot)
    assert forgotten["body"] == strings.FORGOTTEN_ONE.format(
        text="The Atlas code freeze starts on 10 December"
    )
    assert (await ask(alice, room_a, "!memory", bot))["body"] == strings.MEMORY_EMPTY


async def test_follow_ups_use_the_previous_turn_unless_it_was_toxic(people, bot, llm):
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

    def prestep_conversation() -> str:
        prompts = [h["messages"][1]["content"] for h in llm.history if "response_format" in h]
        return prompts[-1].split("<conversation>\n", 1)[1].split("</conversation>")[0].strip()

    await ask(alice, room, "how many leave days do full-time staff get?", bot)
    amended = await ask(alice, room, "also for part-time staff", bot)
    assert "how many leave days do full-time staff get?" in prestep_conversation()
    assert (
        "<question>\nhow many leave days do full-time staff get? (also for part-time staff)\n"
        in (llm.history[-1]["messages"][1]["content"])
    )
    assert "Part-time staff have 15 days" in amended["body"]

    toxic = await ask(alice, room, "HR are parasites, how many leave days do they get?", bot)
    assert toxic["body"] == strings.TOXIC_DECLINED
    await ask(alice, room, "again please", bot)
    assert prestep_conversation() == "", "nothing of the toxic turn comes with the next one"
