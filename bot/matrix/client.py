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
from typing import Literal

from nio import AsyncClient

RETRY_FIRST_SECONDS = 0.5
RETRY_CAP_SECONDS = 4.0


def decide_retry_wait(failures: int, draw: float) -> float:
    """Seconds to wait after the `failures`-th failure in a row (1, 2, ...): doubling from
    RETRY_FIRST_SECONDS up to RETRY_CAP_SECONDS, times `draw` in [0.5, 1] (the jitter)."""
    doubled = RETRY_FIRST_SECONDS * 2 ** (min(max(failures, 1), 16) - 1)
    return min(doubled, RETRY_CAP_SECONDS) * draw


SessionCheck = Literal["valid", "gone", "retry", "refused"]


def decide_session_check(http_status: int | None, errcode: str | None) -> SessionCheck:
    """What an answer to `whoami` says about a saved session. Only the homeserver's
    M_UNKNOWN_TOKEN means the session is gone (a new login makes a new device, and the
    rooms' keys are lost); a proxy's 502, a restart's 503, a 429 or no answer at all are
    tried again; any other Matrix error (a deactivated account) stops the start."""
    if http_status == 200:
        return "valid"
    if errcode == "M_UNKNOWN_TOKEN":
        return "gone"
    if errcode and errcode != "M_LIMIT_EXCEEDED" and http_status and 400 <= http_status < 500:
        return "refused"
    return "retry"


def retry_wait(failures: int) -> float:
    return decide_retry_wait(failures, random.uniform(0.5, 1.0))


class BotClient(AsyncClient):
    # time.monotonic() of the last request that had to be tried again; None: none yet.
    last_retry: float | None = None

    async def get_timeout_retry_wait_time(self, got_timeouts: int) -> float:
        self.last_retry = time.monotonic()
        return retry_wait(got_timeouts)
