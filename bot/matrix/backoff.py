"""How long to wait before trying the homeserver again (pure, and free of matrix-nio, so
that the inbox's sync loop can use it without reaching nio)."""

from __future__ import annotations

import random

RETRY_FIRST_SECONDS = 0.5
RETRY_CAP_SECONDS = 4.0


def decide_retry_wait(failures: int, draw: float) -> float:
    """Seconds to wait after the `failures`-th failure in a row (1, 2, ...): doubling from
    RETRY_FIRST_SECONDS up to RETRY_CAP_SECONDS, times `draw` in [0.5, 1] (the jitter)."""
    doubled = RETRY_FIRST_SECONDS * 2 ** (min(max(failures, 1), 16) - 1)
    return min(doubled, RETRY_CAP_SECONDS) * draw


def retry_wait(failures: int) -> float:
    """The wait after the `failures`-th failure in a row, with a random jitter."""
    return decide_retry_wait(failures, random.uniform(0.5, 1.0))
