"""Citation markers are mapped to the sources given; invented ones disappear."""

from __future__ import annotations

import pytest

from core.citations import build_cited_text

SOURCES = ["travel", "leave", "badges"]

CASES = {
    "kept in order": ("Trains [1]. Leave [2].", "Trains [1]. Leave [2].", ["travel", "leave"]),
    "renumbered by first use": (
        "Badges [3], then trains [1].",
        "Badges [1], then trains [2].",
        ["badges", "travel"],
    ),
    "invented marker removed": (
        "Trains [1] and rockets [7].",
        "Trains [1] and rockets.",
        ["travel"],
    ),
    "zero removed": ("Nothing [0].", "Nothing.", []),
    "grouped markers split": ("Both [1, 2].", "Both [1][2].", ["travel", "leave"]),
    "group with an invented one": ("Both [2, 9].", "Both [1].", ["leave"]),
    "repeated marker cited once": ("A [2]. B [2].", "A [1]. B [1].", ["leave"]),
    "no markers": ("Plain.", "Plain.", []),
    "links and years untouched": ("See [the page](x) in 2027.", "See [the page](x) in 2027.", []),
}


@pytest.mark.parametrize("text,expected,cited", CASES.values(), ids=CASES.keys())
def test_build_cited_text(text, expected, cited):
    assert build_cited_text(text, SOURCES) == (expected, cited)
