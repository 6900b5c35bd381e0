"""matrix-nio's client with waits between retries that a bot can live with.

nio retries a request that times out or cannot connect, for ever, waiting up to 60 s
between tries by default: after a homeserver outage the bot answered up to a minute
late. Here the wait is capped at a few seconds, with jitter (so that bots and clients
restarting together do not knock at once), and the client remembers when it last had to
wait, for /health.
"""

from __future__ import annotations

import random
import time

from nio import AsyncClient

RETRY_FIRST_SECONDS = 0.5
RETRY_CAP_SECONDS = 4.0


def decide_retry_wait(failures: int, draw: float) -> float:
    """Seconds to wait after the `failures`-th failure in a row (1, 2, ...): doubling from
    RETRY_FIRST_SECONDS up to RETRY_CAP_SECONDS, times `draw` in [0.5, 1] (the jitter)."""
    doubled = RETRY_FIRST_SECONDS * 2 ** (min(max(failures, 1), 16) - 1)
    return min(doubled, RETRY_CAP_SECONDS) * draw


def retry_wait(failures: int) -> float:
    return decide_retry_wait(failures, random.uniform(0.5, 1.0))


class BotClient(AsyncClient):
    # time.monotonic() of the last request that had to be tried again; None: none yet.
    last_retry: float | None = None

    async def get_timeout_retry_wait_time(self, got_timeouts: int) -> float:
        self.last_retry = time.monotonic()
        return retry_wait(got_timeouts)
