"""The models teams really run, on a real homeserver: inline reasoning never reaches the
room (edits included), citations in the styles models write list their sources, and a
context window smaller than the default prompt is respected."""

from __future__ import annotations

import json
import re

import pytest

from bot.dev.synapse import free_port
from core import strings
from tests.e2e.people import from_user
from tests.e2e.scripted import ask, llm_config, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put
from tests.pipeline.conftest import verdict

pytestmark = pytest.mark.e2e
TRAVEL = {
    "title": "Travel policy",
    "url": "https://wiki/travel",
    "content": "Trains are booked through Travelink two weeks ahead.",
}


async def start(people, bot, llm, extra: str = "", reasoning_known=True, **bot_settings) -> tuple:
    alice = await people("alice")
    port = free_port()
    bot.write_config(
        knowledge_config(port)
        + llm_config(llm, extra, reasoning_known=reasoning_known)
        + "stream_edit_seconds = 0.2\n",
        allowed_users=[alice.user_id],
        placeholder_after_seconds=0,
        **bot_settings,
    )
    await bot.start()
    room = await room_with_bot(alice, bot)
    await put(port, "handbook", "travel", TRAVEL)
    return alice, room, port


def everything_the_bot_posted(alice, room, bot) -> str:
    return json.dumps([event["content"] for event in alice.seen(room, from_user(bot.user_id))])


@pytest.mark.parametrize("style", ["tagged", "opened"])
async def test_inline_reasoning_never_reaches_the_room(people, bot, llm, style):
    llm.respond, llm.reasoning = reading_model, style
    llm.reasoning_text = "Hmm, SECRET-CHAIN-OF-THOUGHT: the user wants trains, look at source 1."
    alice, room, _ = await start(people, bot, llm, reasoning_known=False)
    answer = await ask(alice, room, "how are trains booked?", bot)
    assert "Travelink" in answer["body"] and "Travel policy" in answer["body"]
    posted = everything_the_bot_posted(alice, room, bot)
    assert "SECRET-CHAIN" not in posted and "think>" not in posted, "no event, no edit"
    assert answer["body"].startswith("From the document")


STYLES = {
    "[Source 1]": "[Source 1]",
    "[source1]": "[source1]",
    "【1】": "【1】",
    "[^1]": "[^1]",
    "(Source 1)": "(Source 1)",
    "[1-1]": "[1-1]",
}


async def test_citations_in_the_styles_models_write_list_their_source(people, bot, llm):
    style = {"marker": "[1]"}

    def citing(body: dict) -> str | dict:
        reply = reading_model(body)
        return (
            re.sub(r"\[(\d+)\]", lambda _: style["marker"], reply)
            if isinstance(reply, str)
            else reply
        )

    llm.respond = citing
    alice, room, _ = await start(people, bot, llm)
    for name, marker in STYLES.items():
        style["marker"] = marker
        answer = await ask(alice, room, f"how are trains booked ({name})?", bot)
        assert marker not in answer["body"], f"{name}: no raw marker"
        text, sources = answer["body"].split("**Sources**")
        assert "[1]" in text and "Travel policy" in sources, name
        assert '<a href="https://wiki/travel">Travel policy</a>' in answer["formatted_body"]


async def test_an_answer_citing_nothing_lists_the_sources_it_was_given(people, bot, llm):
    llm.respond = lambda body: (
        reading_model(body) if "response_format" in body else "Trains go through Travelink."
    )
    alice, room, _ = await start(people, bot, llm)
    answer = await ask(alice, room, "how are trains booked?", bot)
    assert strings.SOURCES_CONSULTED in answer["body"] and "Travel policy" in answer["body"]


WINDOWS = {
    "the window listed (vLLM)": (True, "refuse"),
    "the window named by a refusal": (False, "refuse"),
    "an empty stream (llama-cpp-python)": (False, "empty"),
}


@pytest.mark.parametrize("listed,refusal", WINDOWS.values(), ids=WINDOWS)
async def test_a_window_smaller_than_the_default_prompt_is_fitted(
    people, bot, llm, listed, refusal
):
    llm.respond, llm.context_window, llm.lists_window = reading_model, 900, listed
    llm.too_long_stream = refusal
    alice, room, port = await start(people, bot, llm)
    filler = " ".join(f"Clause {n}: expenses are filed within thirty days." for n in range(120))
    for n in range(6):
        await put(
            port,
            "handbook",
            f"expenses-{n}",
            {"title": f"Expenses {n}", "url": f"https://wiki/expenses-{n}", "content": filler},
        )
    answer = await ask(alice, room, "how are trains booked, and expenses filed?", bot)
    assert answer["body"].startswith("From the document"), answer["body"]
    asked = [body for body in llm.history if body.get("stream")]
    assert len(asked) == (1 if listed else 2), "fitted at once, or after the one refusal"
    assert asked[-1]["max_tokens"] <= 900 // 4, "the answer's tokens kept free"


async def test_a_prompt_that_cannot_fit_gets_the_precise_notice(people, bot, llm):
    llm.respond, llm.context_window = reading_model, 64
    alice, room, _ = await start(people, bot, llm)
    answer = await ask(alice, room, "how are trains booked?", bot)
    # The precise sentence, over the passages search found (the asker is not left
    # empty-handed).
    assert answer["body"].startswith(strings.LLM_TOO_LONG + "\n\n"), answer["body"]
    assert strings.LLM_FALLBACK_INTRO in answer["body"]


async def test_an_answer_started_beside_a_declining_pre_step_never_reaches_the_room(
    people, bot, llm
):
    llm.respond = lambda body: "EARLY-ANSWER: trains through Travelink [1]."
    alice, room, _ = await start(people, bot, llm)
    # A slow verdict: the answer is written while the pre-step still grades.
    llm.enqueue(verdict(toxicity=9), after_stream=True)
    reply = await ask(alice, room, "how are trains booked?", bot)
    assert reply["body"] == strings.TOXIC_DECLINED
    assert any(body.get("stream") for body in llm.history), "an answer was started"
    assert "EARLY-ANSWER" not in everything_the_bot_posted(alice, room, bot)
