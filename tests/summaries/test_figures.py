"""Figures in chat lines: bare figures and the values a message says."""

from __future__ import annotations

import pytest

from core.summaries.figures import build_values, decide_bare_figure


@pytest.mark.parametrize(
    ("text", "bare"),
    [
        ("3", True),
        ("dann 78", True),
        ("1284", True),
        ("+1 更像茶", False),
        ("+1", False),
        ("-1 from me", False),
    ],
)
def test_a_vote_is_no_bare_figure(text: str, bare: bool) -> None:
    assert decide_bare_figure(text) is bare


def test_the_values_of_a_message_read_thousands_and_decimals_in_either_style():
    assert build_values("3,100 events, then 3.100 more; limit 1.5Gi, ratio 4,9:1") == [
        3100.0,
        3100.0,
        1.5,
        4.9,
    ]
    assert build_values("希望は800万〜") == [800.0] and build_values("ok") == []
    assert build_values("timeout 0.125 s") == [0.125]
    assert build_values("sha " + "9" * 40) == [], "a hash is no value"
