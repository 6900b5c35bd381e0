"""The span rules (what the memory store claims to hold of a room), and which part of a
range a summary reads from where: tables of cases."""

from __future__ import annotations

import pytest

from core.history.spans import (
    Kept,
    LeftOut,
    Purged,
    Sources,
    SpanChange,
    after,
    decide_since,
    decide_sources,
)

SPAN_CASES: list[tuple[str, float | None, SpanChange, float | None]] = [
    ("the first line kept starts the span just after it", None, Kept(10.0), 10.001),
    ("a later line kept leaves it", 10.001, Kept(20.0), 10.001),
    ("a line kept older than the span leaves it", 10.001, Kept(5.0), 10.001),
    ("a line left out moves it past the line", 10.001, LeftOut(20.0), 20.001),
    ("a line left out before it leaves it", 10.001, LeftOut(5.0), 10.001),
    ("a line left out with no span starts one after it", None, LeftOut(7.5), 7.501),
    ("retention moves it to the cutoff", 10.001, Purged(30.0), 30.0),
    ("retention before it leaves it", 10.001, Purged(3.0), 10.001),
    ("retention claims nothing where nothing is claimed", None, Purged(30.0), None),
]


@pytest.mark.parametrize(
    ("since", "change", "expected"),
    [case[1:] for case in SPAN_CASES],
    ids=[case[0] for case in SPAN_CASES],
)
def test_span_rules(since: float | None, change: SpanChange, expected: float | None) -> None:
    assert decide_since(since, change) == pytest.approx(expected)


def test_just_after_is_the_next_millisecond_whatever_the_float() -> None:
    assert after(1_795_605_714.939) == 1_795_605_714_940 / 1000
    assert after(0.0) == 0.001


SOURCE_CASES: list[tuple[str, float | None, Sources]] = [
    ("no span: all from the homeserver", None, Sources((100.0, 200.0), None)),
    ("the span covers the range: all from the store", 50.0, Sources(None, (100.0, 200.0))),
    ("a span from the range's start: all from the store", 100.0, Sources(None, (100.0, 200.0))),
    (
        "a span inside: before it from the homeserver",
        150.0,
        Sources((100.0, 150.0), (150.0, 200.0)),
    ),
    ("a span after the range: all from the homeserver", 250.0, Sources((100.0, 200.0), None)),
    ("a span at the range's end", 200.0, Sources((100.0, 200.0), (200.0, 200.0))),
]


@pytest.mark.parametrize(
    ("since", "expected"),
    [case[1:] for case in SOURCE_CASES],
    ids=[case[0] for case in SOURCE_CASES],
)
def test_sources_of_a_range(since: float | None, expected: Sources) -> None:
    assert decide_sources(100.0, 200.0, since) == expected
