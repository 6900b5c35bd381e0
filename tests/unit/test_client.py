"""Waits between tries at an unreachable homeserver, and what a whoami answer means."""

from __future__ import annotations

import pytest

from bot.matrix.backoff import RETRY_CAP_SECONDS, decide_retry_wait
from bot.matrix.client import decide_session_check

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


SESSION_CASES = {
    "confirmed": (200, None, "valid"),
    "token revoked": (401, "M_UNKNOWN_TOKEN", "gone"),
    "a proxy's 502 page": (502, None, "retry"),
    "homeserver restarting": (503, None, "retry"),
    "a 504 with a Matrix error": (504, "M_UNKNOWN", "retry"),
    "rate limited": (429, "M_LIMIT_EXCEEDED", "retry"),
    "no answer at all": (None, None, "retry"),
    "a proxy's 401 without a Matrix error": (401, None, "retry"),
    "account deactivated": (403, "M_USER_DEACTIVATED", "refused"),
}


@pytest.mark.parametrize("status,errcode,expected", SESSION_CASES.values(), ids=SESSION_CASES)
def test_only_an_unknown_token_gives_up_the_session(status, errcode, expected):
    assert decide_session_check(status, errcode) == expected
