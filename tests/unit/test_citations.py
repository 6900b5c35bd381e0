"""Citation markers are mapped to the sources given; invented ones disappear."""

from __future__ import annotations

import itertools

import pytest

from core.citations import build_cited_text, build_streamed_text

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
    "[Source n]": ("Trains [Source 2].", "Trains [1].", ["leave"]),
    "[sourceN], the Unique prompt's style": ("Trains [source3].", "Trains [1].", ["badges"]),
    "[Sources n, m]": ("Both [Sources 1, 2].", "Both [1][2].", ["travel", "leave"]),
    "[Source n, m]": ("Both [Source 2, 3].", "Both [1][2].", ["leave", "badges"]),
    "a range": ("All [1-3].", "All [1][2][3].", ["travel", "leave", "badges"]),
    "a range with an en dash past the sources": ("All [2–9].", "All [1][2].", ["leave", "badges"]),
    "lenticular brackets": ("Trains【1】.", "Trains[1].", ["travel"]),
    "a footnote marker and its definition": (
        "Trains [^1].\n\n[^1]: Travel policy",
        "Trains [1].",
        ["travel"],
    ),
    "(Source n)": ("Trains (Source 1).", "Trains [1].", ["travel"]),
    "plain parentheses stay": ("Two steps (1) and (2).", "Two steps (1) and (2).", []),
    "an invented [Source n] is removed": ("Rockets [Source 7].", "Rockets.", []),
    "a link named by a number stays": ("See [1](https://x).", "See [1](https://x).", []),
}


@pytest.mark.parametrize("text,expected,cited", CASES.values(), ids=CASES.keys())
def test_build_cited_text(text, expected, cited):
    assert build_cited_text(text, SOURCES) == (expected, cited)


CHUNKS = [("travel", 1), ("leave", 1), ("travel", 2), ("travel", 3)]
BY_DOCUMENT = {
    "two chunks of one document: one number": (
        "Trains [1]. Hotels [3].", "Trains [1]. Hotels [1].", [("travel", 1)]
    ),
    "renumbered around the merged document": (
        "Leave [2]. Hotels [3]. Trains [1].", "Leave [1]. Hotels [2]. Trains [2].",
        [("leave", 1), ("travel", 2)],
    ),
    "a group of chunks of one document": ("All [1, 3, 4].", "All [1].", [("travel", 1)]),
}  # fmt: skip


@pytest.mark.parametrize("text,expected,cited", BY_DOCUMENT.values(), ids=BY_DOCUMENT.keys())
def test_build_cited_text_names_each_document_once(text, expected, cited):
    assert build_cited_text(text, CHUNKS, key=lambda chunk: chunk[0]) == (expected, cited)


STREAMED = (
    "Book early [Source 3] and ask the desk【2】 (Source 3). See the FAQ [9] too. "
    "Rates are listed [^2].\n\n[^2]: the rates page"
)


def test_a_streamed_answer_only_grows_and_ends_as_the_final_text():
    """Shown while written: markers renumbered as they will be, a marker not yet closed
    held back, so that each text continues the one before (a stream cannot take back)."""
    sources = ["a", "b", "c"]
    shown = [build_streamed_text(STREAMED[:end], sources) for end in range(len(STREAMED) + 1)]
    for before, after in itertools.pairwise(shown):
        assert after.startswith(before), (before, after)
    assert shown[-1] == build_cited_text(STREAMED, sources)[0]
    assert "[Source" not in "".join(shown) and "[9]" not in "".join(shown)
