"""Which retrieved passages may be posted in the answer's room as far as encryption goes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.knowledge.documents import Hit
from core.pipeline.grounding import decide_postable

DOC = Hit("c#0", "handbook", "travel", "wiki", "Travel", "", "", "Trains.", 0, True, 1.0)
SUMMARY = replace(DOC, collection="room-summaries", room="!sealed")

CASES = {
    "a document of no room": (DOC, ("!sealed",), True),
    "a summary written while its room was encrypted": (
        replace(SUMMARY, encrypted=True),
        ("!sealed",),
        False,
    ),
    "a summary of an earlier release (not known)": (
        replace(SUMMARY, encrypted=None),
        ("!sealed",),
        False,
    ),
    "a summary from before its room turned encryption on": (
        replace(SUMMARY, encrypted=False),
        ("!sealed",),
        True,
    ),
    "an encrypted summary, into an encrypted room": (
        replace(SUMMARY, encrypted=True),
        (),
        True,
    ),
}


@pytest.mark.parametrize("hit,plaintext_only,expected", CASES.values(), ids=CASES)
def test_decide_postable(hit, plaintext_only, expected):
    assert decide_postable(hit, plaintext_only) is expected
