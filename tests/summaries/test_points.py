"""The points of a summary without a model (pure): threads within a budget."""

from __future__ import annotations

from core.summaries.draft import SummaryLine
from core.summaries.points import FEWEST_QUOTED, POINT_LINES, QUOTED_SHARE, decide_thread_points
from core.summaries.salience import Pick
from core.summaries.threads import build_terms, decide_links


def room(*said: tuple[str, str]) -> list[SummaryLine]:
    return [
        SummaryLine(n, sender, text, 1e9 + 60 * n, f"https://l/{n}", f"$e{n}")
        for n, (sender, text) in enumerate(said, start=1)
    ]


def points(lines: list[SummaryLine], picks: list[Pick] | None = None) -> list[Pick]:
    terms = build_terms(lines)
    live, links = decide_links(lines, frozenset(), terms)
    return decide_thread_points(lines, picks or [], live, links, terms)


# Thirty lines on six subjects, each named by its own service.
SERVICES = (
    "billing-api",
    "search-indexer",
    "mail-relay",
    "auth-gateway",
    "pdf-renderer",
    "geo-cache",
)
BUSY = room(
    *[
        (
            f"@p{n % 4}:x",
            f"{service} step {step}: latency {100 + 7 * n} ms on node {n}, still checking",
        )
        for n, (service, step) in enumerate(
            (service, step) for service in SERVICES for step in range(5)
        )
    ]
)


def test_a_busy_room_is_quoted_within_its_budget_and_no_point_runs_on():
    found = points(BUSY)
    quoted = [i for pick in found for i in pick.lines]
    assert len(quoted) <= QUOTED_SHARE * len(BUSY)
    assert all(len(pick.lines) <= POINT_LINES for pick in found)
    assert len(quoted) == len(set(quoted)), "a line is quoted once"


def test_the_lines_the_cue_phrases_picked_are_kept_longest():
    picked = Pick("decision", (10, 11), 11)
    found = points(BUSY, [picked])
    assert {10, 11} <= {i for pick in found for i in pick.lines}
    assert any(pick.said == "decision" and pick.main == 11 for pick in found)


def test_acknowledgements_are_left_out_and_a_small_room_is_quoted_whole():
    lines = room(
        ("@ana:x", "The export job failed again at 02:00, disk full on batch-01"),
        ("@kai:x", "ok"),
        ("@eli:x", "I'll clean the old dumps on batch-01 this morning"),
        ("@kai:x", "👍"),
    )
    quoted = {i for pick in points(lines) for i in pick.lines}
    assert quoted == {0, 2}
    assert len(lines) - 2 < FEWEST_QUOTED
