"""Search-only answers' quotes of the room's discussion: whole lines, who said each, its
link and its source's number; the lines that match the question and the one answering."""

from __future__ import annotations

from core.history.line_store import HistoryLine
from core.knowledge.documents import Hit
from core.pipeline.quoting import (
    QUOTED_LINES,
    build_passages_answer,
    decide_quoted_lines,
    parse_window_lines,
)
from core.pipeline.recall import HISTORY

WINDOW = [
    HistoryLine(1, "@ann:x", "We compared Postgres and MySQL for Atlas this morning.", 1.0, "l1"),
    HistoryLine(2, "@bob:x", "Lunch at the Thai place?", 2.0, "l2"),
    HistoryLine(3, "@ann:x", "So which database do we pick for Atlas?", 3.0, "l3"),
    HistoryLine(4, "@bob:x", "Let's go with the Postgres option, it is what we know.", 4.0, "l4"),
    HistoryLine(5, "@ann:x", "Fine by me.", 5.0, "l5"),
]


def test_the_matching_lines_come_with_the_line_that_answers_a_question():
    quoted = decide_quoted_lines("which database did we pick for Atlas?", WINDOW)
    assert [line.seq for line in quoted] == [1, 3, 4]


def test_a_window_that_shares_no_word_is_quoted_from_its_start():
    assert len(decide_quoted_lines("what about the budget?", WINDOW)) == QUOTED_LINES


def test_quoted_lines_are_whole_with_who_their_link_and_the_sources_number():
    hit = Hit(
        chunk_id="w1",
        collection=HISTORY,
        document_id="w1",
        source=HISTORY,
        title="Earlier discussion",
        url="l1",
        heading="",
        text="…",
        position=0,
        public=False,
        score=0.0,
        room="!r",
    )
    text, sources = build_passages_answer([hit], (), {"w1": WINDOW[2:4]})
    assert text.endswith(
        "> @ann:x: So which database do we pick for Atlas? ([message](l3)) [1]\n\n"
        "> @bob:x: Let's go with the Postgres option, it is what we know. ([message](l4)) [1]"
    )
    assert len(sources) == 1


def test_windows_of_an_earlier_release_are_read_from_their_text():
    lines = parse_window_lines("@ann:x: the gateway moved: vpn2\n@bob:x: thanks")
    assert [(line.sender, line.text, line.link) for line in lines] == [
        ("@ann:x", "the gateway moved: vpn2", ""),
        ("@bob:x", "thanks", ""),
    ]
