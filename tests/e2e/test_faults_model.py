"""A model whose answer stream ends badly, in a real room: an empty stream is told as
empty, never an empty reply; a stream cut before its end is shown as what it is (the
text so far, quoted and marked incomplete), never as an answer; either way the passages
search found follow, with their sources; and the same bot answers the next question
normally."""

from __future__ import annotations

import re

import pytest

from bot.dev.synapse import free_port
from bot.inbox.render import ANSWER_ID_KEY
from core import strings
from tests.e2e.people import from_user, replies_to
from tests.e2e.scripted import ask, llm_config, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put_travel_policy
from tests.e2e.test_ops import get
from tests.pipeline.conftest import verdict

pytestmark = pytest.mark.e2e

PARTIAL = "Trains are booked through Travelink [1], at least two weeks ah"


async def start(people, bot, llm) -> tuple:
    """Alice, the bot on the reading model (streaming edits often, a placeholder at
    once), a travel policy to answer from; (alice, room, the ops port)."""
    alice = await people("alice")
    llm.respond = reading_model
    port, ops = free_port(), free_port()
    bot.write_config(
        knowledge_config(port) + llm_config(llm) + "stream_edit_seconds = 0.2\n",
        allowed_users=[alice.user_id],
        ops_port=ops,
        placeholder_after_seconds=0,
    )
    await bot.start()
    room = await room_with_bot(alice, bot)
    await put_travel_policy(port, url="https://wiki/travel")
    return alice, room, ops


async def failures(ops: int) -> dict[str, float]:
    _, text = await get(f"http://127.0.0.1:{ops}/metrics")
    found = re.findall(r'^bot_failures_total\{cause="([^"]+)"\} (\S+)$', text, re.M)
    return {cause: float(count) for cause, count in found}


async def test_an_empty_stream_is_told_as_empty_over_the_passages_found(people, bot, llm):
    alice, room, ops = await start(people, bot, llm)
    llm.enqueue(verdict())
    llm.enqueue("", ending="empty")
    reply = await ask(alice, room, "how are trains booked?", bot)
    assert reply["body"].startswith(strings.LLM_EMPTY + "\n\n" + strings.LLM_FALLBACK_INTRO)
    assert "> Trains are booked through Travelink two weeks ahead. [1]" in reply["body"]
    assert "**Sources**" in reply["body"] and "https://wiki/travel" in reply["body"]
    assert (await failures(ops)).get("llm_empty") == 1, "counted as the failure it is"


async def test_a_cut_stream_is_shown_incomplete_and_the_next_question_answered(people, bot, llm):
    alice, room, ops = await start(people, bot, llm)
    # The server goes away mid-answer: no finish_reason, no [DONE], the body cut.
    llm.enqueue(verdict())
    llm.enqueue(PARTIAL, ending="cut")
    cut = await ask(alice, room, "how are trains booked?", bot)
    # The body ends cleanly, but without the model's finish_reason (nor [DONE]).
    llm.enqueue(verdict())
    llm.enqueue(PARTIAL, ending="no_done")
    unended = await ask(alice, room, "how are trains booked, again?", bot)

    quoted = "> Trains are booked through Travelink, at least two weeks ah"
    for reply in (cut, unended):
        # What it wrote, quoted and marked incomplete, then the passages search found.
        notice, passages = reply["body"].split("\n\n" + strings.LLM_FALLBACK_INTRO)
        assert notice == strings.LLM_INCOMPLETE.format(partial=quoted)
        assert "> Trains are booked through Travelink two weeks ahead. [1]" in passages
        assert "**Sources**" in passages and "<blockquote>" in reply["formatted_body"]
    assert (await failures(ops)).get("llm_incomplete") == 2

    answered = await ask(alice, room, "how are trains booked?", bot)
    assert answered["body"].startswith("From the document: Trains are booked through Travelink")
    assert "**Sources**" in answered["body"] and answered[ANSWER_ID_KEY]
    questions = alice.seen(room, from_user(alice.user_id))
    assert len(questions) == 3
    for question in questions:
        assert len(alice.seen(room, replies_to(question["event_id"]))) == 1, "one reply each"
