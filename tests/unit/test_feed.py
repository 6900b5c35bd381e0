"""The conversation lines reused as context: only for readers who could read them."""

from __future__ import annotations

import pytest

from bot.features.answers.feed import Feed, FeedLine
from core.requests import ChatLine
from core.rights.readers import ALWAYS

ALICE, CAROL, BOT = "@alice:x", "@carol:x", "@bot:x"


def feed() -> Feed:
    lines = Feed()
    lines.add("!r", None, FeedLine("$1", ChatLine(ALICE, "what does the note say?"), 100.0))
    answer = ChatLine(BOT, "The note says 42.", from_bot=True)
    lines.add("!r", None, FeedLine("a1", answer, 101.0, frozenset({ALICE})))
    lines.add("!r", None, FeedLine("$3", ChatLine(ALICE, "thanks"), 300.0))
    lines.add("!r", None, FeedLine("$4", ChatLine(CAROL, "what else?"), 400.0))
    return lines


CASES = {
    "the readers it was written for: everything": (
        {ALICE},
        ALWAYS,
        ["what does the note say?", "The note says 42.", "thanks"],
    ),
    "a new reader: not the bot's answer to others": (
        {ALICE, CAROL},
        ALWAYS,
        ["what does the note say?", "thanks"],
    ),
    "joined history: nothing said before the latest join": ({ALICE, CAROL}, 200.0, ["thanks"]),
    "no knowledge of the room at all": ({ALICE}, None, []),
}


@pytest.mark.parametrize("readers,since,expected", CASES.values(), ids=CASES.keys())
def test_recent_lines_for_readers(readers, since, expected):
    found = feed().recent("!r", None, 10, "$4", readers=frozenset(readers), since=since)
    assert [line.text for line in found] == expected


def test_thousands_of_threads_keep_only_the_most_recently_active_conversations():
    lines = Feed(max_conversations=100)
    for n in range(1_000):
        lines.add("!r", f"$thread{n}", FeedLine(f"$q{n}", ChatLine(ALICE, f"question {n}"), n))
        lines.add("!r", None, FeedLine(f"$m{n}", ChatLine(ALICE, "in the main timeline"), n))
    assert len(lines) == 100
    assert lines.recent("!r", "$thread999", 5, "$end", readers=frozenset(), since=0) == (
        ChatLine(ALICE, "question 999"),
    )
    assert lines.recent("!r", None, 1, "$end", readers=frozenset(), since=0), "kept: in use"
    assert lines.recent("!r", "$thread0", 5, "$end", readers=frozenset(), since=0) == ()


def test_a_line_that_comes_late_takes_its_place_by_when_it_was_said():
    """A voice message's transcript comes seconds after it was said: a question asked
    right after the voice message still has it before it."""
    lines = feed()
    lines.add("!r", None, FeedLine("$v", ChatLine(CAROL, "(voice) the note is wrong"), 350.0))
    recent = lines.recent("!r", None, 10, "$4", readers=frozenset({ALICE}), since=ALWAYS)
    assert [line.text for line in recent][-2:] == ["thanks", "(voice) the note is wrong"]
