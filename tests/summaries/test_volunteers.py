"""A volunteer's short reply in any language (pure): a closed class."""

from __future__ import annotations

import pytest

from core.summaries.volunteers import decide_volunteers


@pytest.mark.parametrize(
    "text",
    [
        "mine",
        "Me!",
        "i'll take it",
        "yo",
        "yo 🙋‍♂️",
        "Ich!",
        "mach ich",
        "moi",
        "io",
        "deixa comigo",
        "ik",
        "jag tar det",
        "ja mogę",
        "я",
        "беру",
        "제가 할게요",
        "我来",
        "私がやります",
        "@dana: mine",
        "Dana: mine",
        "kai, yo",
        "übernehm ich",
    ],
)
def test_a_reply_that_only_names_its_speaker_volunteers(text):
    assert decide_volunteers(text)


@pytest.mark.parametrize(
    "text",
    [
        "me?",
        "me? 😅",
        "ich؟",
        "me too",
        "ich auch",
        "yo también",
        "moi aussi",
        "ok",
        "👍",
        "mine is broken",
        "not me",
        "我也是",
        "yo creo que sí",
        "",
    ],
)
def test_anything_else_volunteers_nobody(text):
    assert not decide_volunteers(text)
