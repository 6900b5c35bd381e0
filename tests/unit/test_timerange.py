"""Time expressions read as ranges in the room's time zone."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from core.timerange import TimeExpressionFinder, resolve_range

PARIS = ZoneInfo("Europe/Paris")
# A Saturday.
NOW = datetime(2026, 11, 21, 10, 30, tzinfo=PARIS)


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=PARIS)


CASES = {
    "today": ("today", "", at("2026-11-21"), NOW),
    "yesterday": ("yesterday", "", at("2026-11-20"), at("2026-11-21")),
    "last week is Monday to Monday": ("last week", "", at("2026-11-09"), at("2026-11-16")),
    "this week": ("this week", "", at("2026-11-16"), NOW),
    "last month": ("last month", "", at("2026-10-01"), at("2026-11-01")),
    "the last 3 days": ("the last 3 days", "", at("2026-11-18T10:30"), NOW),
    "past two weeks": ("past two weeks", "", at("2026-11-07T10:30"), NOW),
    "since Monday": ("Monday", "since", at("2026-11-16"), NOW),
    "a weekday alone is its last one": ("Tuesday", "", at("2026-11-17"), at("2026-11-18")),
    "in March: this year's": ("March", "in", at("2026-03-01"), at("2026-04-01")),
    "December asked in November: last year's": (
        "December", "", at("2025-12-01"), at("2026-01-01"),
    ),
    "a year": ("2025", "in", at("2025-01-01"), at("2026-01-01")),
    "a date": ("3 November", "on", at("2026-11-03"), at("2026-11-04")),
    "before a month": ("October", "before", at("1970-01-01"), at("2026-10-01")),
}  # fmt: skip


@pytest.mark.parametrize("expression,connective,start,end", CASES.values(), ids=CASES.keys())
def test_resolve_range(expression, connective, start, end):
    found = resolve_range(expression, NOW, connective)
    assert found is not None and (found.start, found.end) == (start, end)


@pytest.mark.parametrize(
    "expression",
    ["two weeks", "soon", "the weekly sync", "December 31, 9999", "the last 99999999 years"],
)
def test_durations_and_vague_words_are_not_ranges(expression):
    assert resolve_range(expression, NOW) is None


def test_the_finder_reads_questions():
    finder = TimeExpressionFinder()
    last_week = finder.find_range("what did we decide last week about the VPN?", NOW)
    assert last_week and last_week.start == at("2026-11-09")
    since = finder.find_range("summarize since Monday", NOW)
    assert since and (since.start, since.end) == (at("2026-11-16"), NOW)
    assert finder.find_range("how do I reset my password?", NOW) is None
    assert finder.find_range("do we book trains two weeks ahead?", NOW) is None
