"""Small talk told by the learned model (real multilingual e5) and by its neighbours."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from core.config.knowledge import MULTILINGUAL_EMBEDDING_MODEL
from core.knowledge.search.embedding import Embedders
from core.summaries.draft import SummaryLine
from core.summaries.smalltalk import (
    SHORT_WORDS,
    decide_smalltalk,
    fetch_smalltalk,
    load_smalltalk_model,
)

HELD_OUT = Path(__file__).parent.parent / "data" / "summaries" / "heldout2"


def room(*said: tuple[str, str]) -> list[SummaryLine]:
    return [
        SummaryLine(n, sender, text, 1e9 + 60 * n, f"https://l/{n}", f"$e{n}")
        for n, (sender, text) in enumerate(said, start=1)
    ]


LINES = room(
    ("@lena:x", "my tram sat outside the station for 40 min because of a goose"),
    ("@marc:x", "is the goose ok"),
    ("@lena:x", "ha, the 7:40 one"),
    ("@dan:x", "the replay of the failed webhook events is done, 11 failed again"),
    ("@priya:x", "lol ok"),
)


def test_a_short_line_is_what_it_answers_unless_it_names_a_figure():
    judged = {0: True, 3: False}
    assert decide_smalltalk(LINES, judged) == {0, 1}, "a figure makes '7:40' something else"
    replied = [*LINES[:4], replace(LINES[4], reply_to="$e1")]
    assert 4 in decide_smalltalk(replied, judged), "a reply to small talk is small talk"


def test_small_talk_does_not_spread_to_what_is_decided_next_or_later():
    lunch = room(
        ("@ben:x", "anyone up for the Thai place today?"),
        ("@eva:x", "me!"),
        ("@ana:x", "We decided to move the release"),
        ("@kai:x", "ok"),
    )
    assert decide_smalltalk(lunch, {}) == {0, 1}, "a decision is no small talk"
    later = [*lunch[:2], replace(lunch[3], ts=lunch[1].ts + 5 * 3600)]
    assert decide_smalltalk(later, {}) == {0, 1}, "hours later is another exchange"


async def test_without_the_embedding_models_only_the_cue_phrases_tell_small_talk():
    lunch = room(("@ben:x", "anyone up for the Thai place today?"), ("@eva:x", "me!"))
    assert await fetch_smalltalk(lunch, None) == {0, 1}
    assert await fetch_smalltalk(LINES, None) == frozenset()


async def test_the_model_tells_small_talk_in_rooms_it_was_not_trained_on(embedders: Embedders):
    """heldout2/ (six languages, written by someone who had not read the code, never
    trained on): its chatter messages against the messages of its key facts."""
    chatter, work = [], []
    for path in sorted(HELD_OUT.glob("*.json")):
        log = json.loads(path.read_text(encoding="utf-8"))
        facts = {m for fact in log["key_facts"] for group in fact["messages"] for m in group}
        for message in log["messages"]:
            if len(message["text"].split()) < SHORT_WORDS:
                continue  # a short line is judged by what it answers
            if message["id"] in log["noise"]:
                chatter.append(message["text"])
            elif message["id"] in facts:
                work.append(message["text"])
    embedder = embedders.get(MULTILINGUAL_EMBEDDING_MODEL)
    model = load_smalltalk_model()
    said = model.probabilities(np.array(await embedder.embed_queries(chatter)))
    worked = model.probabilities(np.array(await embedder.embed_queries(work)))
    caught = float((said > model.threshold).mean())
    lost = float((worked > model.threshold).mean())
    print(
        f"held-out chatter caught {caught:.0%} of {len(chatter)}, work lost {lost:.0%} of {len(work)}"
    )
    assert caught >= 0.85 and lost <= 0.05
