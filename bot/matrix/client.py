"""matrix-nio's client with waits between retries that a bot can live with.

nio retries a request that times out or cannot connect, for ever, waiting up to 60 s
between tries by default: after a homeserver outage the bot answered up to a minute
late. Here the wait is capped at a few seconds, with jitter (so that bots and clients
restarting together do not knock at once), and the client remembers when it last had to
wait, for /health.
"""

from __future__ import annotations

import time
from typing import Literal

from nio import AsyncClient

from bot.matrix.backoff import retry_wait

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


class BotClient(AsyncClient):
    # time.monotonic() of the last request that had to be tried again; None: none yet.
    last_retry: float | None = None

    async def get_timeout_retry_wait_time(self, got_timeouts: int) -> float:
        self.last_retry = time.monotonic()
        return retry_wait(got_timeouts)
