"""Background loops and services, kept running: a loop that fails is logged with a
reference, waits (longer after each failure in a row) and starts again, and /health
names it, with its reason, until it has run a while without failing. The catch-all of
these entry points.

The first failure of a run of failures is also handed to `on_failure` (the bot reports
it in its admin room): once per outage, not once per retry, so that a port that stays
taken is said once rather than every minute.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

RETRY_SECONDS = (1, 2, 5, 10, 30, 60)
# A loop that ran this long since its last failure counts as recovered.
RECOVERED_SECONDS = 60

# Told of a loop's first failure in a row: its name and the reason, fit for admins.
FailureReport = Callable[[str, str], Awaitable[None]]


class ServiceUnavailable(Exception):
    """A service cannot run as configured; the text says why in words fit for admins
    (no secret, no message text) and names the setting to change."""


def build_listen_error(service: str, host: str, port: int, setting: str, error: OSError) -> str:
    """Why a service could not listen, for admins: the address, the system's reason, and
    the setting that changes it."""
    # The system's words for its errno ("Address already in use"): aiohttp's own text
    # repeats the address.
    reason = os.strerror(error.errno) if error.errno else type(error).__name__
    return f"the {service} cannot listen on {host}:{port} ({reason.lower()}); change {setting}"


@dataclass
class LoopState:
    failures_in_a_row: int = 0
    last_failure: float | None = None  # time.monotonic()
    reason: str = ""


def build_failure_reason(error: Exception, reference: str) -> str:
    """What an admin is told of a failure: a ServiceUnavailable's own words; of any other
    error only its kind and the log's reference (its text may quote anything)."""
    if isinstance(error, ServiceUnavailable):
        return str(error)
    return f"{type(error).__name__} (reference {reference} in the log)"


class Supervisor:
    def __init__(
        self,
        retry_seconds: tuple[float, ...] = RETRY_SECONDS,
        stop_on: tuple[type[Exception], ...] = (),
        on_failure: FailureReport | None = None,
    ) -> None:
        self.retry_seconds = retry_seconds
        # Exceptions that end the loop for good, raised on to whoever runs it.
        self.stop_on = stop_on
        self.on_failure = on_failure
        self.loops: dict[str, LoopState] = {}

    def failing(self) -> list[str]:
        """The loops that failed less than RECOVERED_SECONDS ago."""
        return sorted(self.reasons())

    def reasons(self) -> dict[str, str]:
        """Each loop that failed less than RECOVERED_SECONDS ago, with why."""
        now = time.monotonic()
        return {
            name: state.reason
            for name, state in self.loops.items()
            if state.last_failure is not None and now - state.last_failure < RECOVERED_SECONDS
        }

    async def keep_running(self, name: str, start: Callable[[], Awaitable[None]]) -> None:
        """Run `start()` until it returns; when it raises, log, back off and run it again."""
        state = self.loops.setdefault(name, LoopState())
        while True:
            started = time.monotonic()
            try:
                await start()
                return
            except self.stop_on:
                raise
            except Exception as exc:
                if time.monotonic() - started > RECOVERED_SECONDS:
                    state.failures_in_a_row = 0
                delays = self.retry_seconds
                delay = delays[min(state.failures_in_a_row, len(delays) - 1)]
                state.failures_in_a_row += 1
                state.last_failure = time.monotonic()
                reference = uuid.uuid4().hex[:8]
                state.reason = build_failure_reason(exc, reference)
                if isinstance(exc, ServiceUnavailable):
                    # Its own words say it all; a stack would only repeat them.
                    log.error(
                        "%s is not running: %s (%d in a row); starting it again in %s s",
                        name,
                        exc,
                        state.failures_in_a_row,
                        delay,
                    )
                else:
                    log.exception(
                        "%s failed (reference %s, %d in a row); starting it again in %s s",
                        name,
                        reference,
                        state.failures_in_a_row,
                        delay,
                    )
                if state.failures_in_a_row == 1 and self.on_failure is not None:
                    await self._report(name, state.reason)
                await asyncio.sleep(delay)

    async def _report(self, name: str, reason: str) -> None:
        assert self.on_failure is not None
        try:
            await self.on_failure(name, reason)
        except Exception:
            # The report is a courtesy: a loop must not die of it.
            log.exception("the failure of %s could not be reported", name)
