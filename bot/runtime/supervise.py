"""The bot's background loops, kept running: a loop that fails is logged with a
reference, waits (longer after each failure in a row) and starts again, and /health
names it until it has run a while without failing. The catch-all of these entry points."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

RETRY_SECONDS = (1, 2, 5, 10, 30, 60)
# A loop that ran this long since its last failure counts as recovered.
RECOVERED_SECONDS = 60


@dataclass
class LoopState:
    failures_in_a_row: int = 0
    last_failure: float | None = None  # time.monotonic()


class Supervisor:
    def __init__(
        self,
        retry_seconds: tuple[float, ...] = RETRY_SECONDS,
        stop_on: tuple[type[Exception], ...] = (),
    ) -> None:
        self.retry_seconds = retry_seconds
        # Exceptions that end the loop for good, raised on to whoever runs it.
        self.stop_on = stop_on
        self.loops: dict[str, LoopState] = {}

    def failing(self) -> list[str]:
        """The loops that failed less than RECOVERED_SECONDS ago."""
        now = time.monotonic()
        return sorted(
            name
            for name, state in self.loops.items()
            if state.last_failure is not None and now - state.last_failure < RECOVERED_SECONDS
        )

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
            except Exception:
                if time.monotonic() - started > RECOVERED_SECONDS:
                    state.failures_in_a_row = 0
                delays = self.retry_seconds
                delay = delays[min(state.failures_in_a_row, len(delays) - 1)]
                state.failures_in_a_row += 1
                state.last_failure = time.monotonic()
                reference = uuid.uuid4().hex[:8]
                log.exception(
                    "%s failed (reference %s, %d in a row); starting it again in %s s",
                    name, reference, state.failures_in_a_row, delay,
                )  # fmt: skip
                await asyncio.sleep(delay)
