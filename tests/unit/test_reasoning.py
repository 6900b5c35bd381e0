"""A model's inline reasoning never reaches what people read: tables."""

from __future__ import annotations

import pytest

from core.llm.reasoning import parse_reasoning

FINAL = {
    "no reasoning": ("Trains via Travelink [1].", "Trains via Travelink [1].", 0),
    "a think block": ("<think>They ask about trains.</think>\n\nTrains [1].", "Trains [1].", 37),
    "a thinking block": ("<thinking>hmm</thinking>Trains.", "Trains.", 24),
    "a reasoning block, upper case": ("<REASONING>x</REASONING> Trains.", "Trains.", 24),
    "a lone closing tag (the template opened it)": (
        "The user asks about trains.\n</think>\n\nTrains [1].",
        "Trains [1].",
        36,
    ),
    "an empty block (thinking turned off)": ("<think>\n\n</think>\n\nTrains.", "Trains.", 17),
    "a block that never closed (cut)": ("<think>They ask about", "", 21),
    "JSON after the reasoning": ('<think>grade it</think>{"toxicity": 0}', '{"toxicity": 0}', 23),
    "other tags stay": (
        "Use <b>bold</b> and <thin> words.",
        "Use <b>bold</b> and <thin> words.",
        0,
    ),
}


@pytest.mark.parametrize("raw,shown,reasoning", FINAL.values(), ids=FINAL)
def test_a_whole_reply(raw, shown, reasoning):
    found = parse_reasoning(raw)
    assert (found.text, found.reasoning_chars) == (shown, reasoning)


STREAMED = {
    "an open block shows nothing": ("<think>They ask", False, ""),
    "a tag being written is held back": ("<thi", False, ""),
    "after the block, the answer": ("<think>x</think> Trains", False, "Trains"),
    "a closing tag being written": ("<think>x</th", False, ""),
    "plain text streams": ("Trains are", False, "Trains are"),
    "text then a tag being written": ("Trains <", False, "Trains "),
    "reasoning without its tag, once known": ("The user asks", True, ""),
    "and its answer once closed": ("The user asks</think>\n\nTrains", True, "Trains"),
    "a known model that opens the tag itself": ("<think>x</think>Trains", True, "Trains"),
}


@pytest.mark.parametrize("raw,opens,shown", STREAMED.values(), ids=STREAMED)
def test_a_reply_being_streamed(raw, opens, shown):
    assert parse_reasoning(raw, final=False, opens_in_prompt=opens).text == shown


def test_a_model_known_to_open_the_tag_that_did_not_reason_is_shown_whole_at_the_end():
    assert parse_reasoning("Trains.", opens_in_prompt=True).text == "Trains."


def test_a_lone_closing_tag_is_reported():
    assert parse_reasoning("x</think>Trains.").closed_alone
    assert not parse_reasoning("<think>x</think>Trains.").closed_alone
