"""Waits between tries at an unreachable homeserver: short, capped, jittered."""

from __future__ import annotations

import pytest

from bot.client import RETRY_CAP_SECONDS, decide_retry_wait

CASES = {
    "the first failure waits half a second at most": (1, 1.0, 0.5),
    "then doubling": (3, 1.0, 2.0),
    "capped, however long the outage": (40, 1.0, RETRY_CAP_SECONDS),
    "jitter takes up to half off": (40, 0.5, RETRY_CAP_SECONDS / 2),
    "nio's first retry counts as the first failure": (0, 1.0, 0.5),
}


@pytest.mark.parametrize("failures,draw,expected", CASES.values(), ids=CASES.keys())
def test_decide_retry_wait(failures, draw, expected):
    assert decide_retry_wait(failures, draw) == pytest.approx(expected)
