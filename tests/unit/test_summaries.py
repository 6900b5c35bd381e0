"""Summaries: schedules, ranges, parts, representatives and the rendered summary."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core import strings
from core.config.summaries import Schedule, parse_schedule
from core.summaries.draft import (
    ActionItem,
    Point,
    SummaryDraft,
    SummaryLine,
    build_summary_markdown,
)
from core.summaries.ranges import SummaryRange, decide_summary_range
from core.summaries.summarizer import split_parts
from core.timerange import resolve_range

SCHEDULES = {
    "off": ("", None),
    "every day": ("every 1d", Schedule(seconds=86_400)),
    "every six hours": ("every 6h", Schedule(seconds=21_600)),
    "every 30 minutes": ("every 30 minutes", Schedule(seconds=1_800)),
    "a crontab": ("cron: 0 18 * * 1-5", Schedule(crontab="0 18 * * 1-5")),
}


@pytest.mark.parametrize("text,expected", SCHEDULES.values(), ids=SCHEDULES.keys())
def test_parse_schedule(text, expected):
    assert parse_schedule(text) == expected


@pytest.mark.parametrize("text", ["weekly", "every 5s", "cron: 61 * * * *", "every day"])
def test_unreadable_schedules_are_config_errors(text):
    with pytest.raises(ValueError):
        parse_schedule(text)


NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
HOUR = 3600.0
RANGES = {
    "the room since the last summary": (
        "",
        None,
        NOW.timestamp() - HOUR,
        False,
        SummaryRange(NOW.timestamp() - HOUR, NOW.timestamp()),
    ),
    "the room's last day when never summarised": (
        "",
        None,
        None,
        False,
        SummaryRange(NOW.timestamp() - 24 * HOUR, NOW.timestamp()),
    ),
    "a whole thread": ("", None, NOW.timestamp() - HOUR, True, SummaryRange(0.0, NOW.timestamp())),
    "words": (
        "last 3 days",
        resolve_range("last 3 days", NOW),
        None,
        False,
        SummaryRange(NOW.timestamp() - 72 * HOUR, NOW.timestamp()),
    ),
    "today ends now": (
        "today",
        resolve_range("today", NOW),
        None,
        False,
        SummaryRange(datetime(2026, 11, 21, tzinfo=UTC).timestamp(), NOW.timestamp()),
    ),
    "words that are not a time": ("the release", None, None, False, None),
}


@pytest.mark.parametrize("args,found,last,thread,expected", RANGES.values(), ids=RANGES.keys())
def test_decide_summary_range(args, found, last, thread, expected):
    got = decide_summary_range(
        args, now=NOW, found=found, last_summary=last, default_hours=24, in_thread=thread
    )
    assert got == expected


def test_parts_fit_the_budget_and_keep_the_order():
    parts = split_parts(list(range(10)), lambda n: 3, 10)
    assert parts == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert split_parts([1, 50, 2], lambda n: n, 10) == [[1], [50], [2]], "too big: alone"


LINES = [
    SummaryLine(1, "@ann:x", "We go with Postgres.", 0.0, "https://matrix.to/#/!r/$1"),
    SummaryLine(2, "@bob:x", "I'll migrate by Friday.", 1.0, "https://matrix.to/#/!r/$2"),
]


def test_the_summary_links_each_point_and_says_no_decision_rather_than_inventing():
    draft = SummaryDraft(
        tldr="The team picked a database.",
        decisions=[Point(text="Use Postgres", messages=[1, 99])],
        action_items=[ActionItem(text="Migrate", owner="@bob:x", due="Friday", messages=[2])],
        open_questions=[],
    )
    text = build_summary_markdown(draft, LINES, "**Summary**")
    assert "- Use Postgres [1](https://matrix.to/#/!r/$1)" in text, "99 is no line: dropped"
    assert "- Migrate (@bob:x, by Friday) [2](https://matrix.to/#/!r/$2)" in text
    assert f"- {strings.SUMMARY_NO_QUESTION}" in text
    empty = SummaryDraft(tldr="Chat.", decisions=[], action_items=[], open_questions=[])
    assert f"- {strings.SUMMARY_NO_DECISION}" in build_summary_markdown(empty, LINES, "")


def test_an_empty_tldr_is_left_out_rather_than_shown_as_a_bare_heading():
    draft = SummaryDraft(
        tldr="  ",
        decisions=[Point(text="Use Postgres", messages=[1])],
        action_items=[],
        open_questions=[],
    )
    text = build_summary_markdown(draft, LINES, "**Summary**")
    assert strings.SUMMARY_TLDR not in text, text
    assert text.startswith("**Summary**\n\n**")


def test_a_models_point_written_over_several_lines_stays_one_bullet():
    draft = SummaryDraft(
        tldr="A plan.",
        decisions=[Point(text="Use Postgres:\n1. staging first\n2. then prod", messages=[1])],
        action_items=[ActionItem(text="Migrate\nthe data", owner="", due="", messages=[2])],
        open_questions=[],
    )
    text = build_summary_markdown(draft, LINES, "**Summary**")
    assert "- Use Postgres: 1. staging first 2. then prod [1](" in text, text
    assert "- Migrate the data [2](" in text, text
