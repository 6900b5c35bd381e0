"""What the bot tells its admin room: config edits applied or refused, and services that
cannot run. Sent by the active process, in order, once the bot is in the room: a report
made while it logs in, or before it has joined the admin room (a first start), waits
for it instead of being lost; one made while it stands by is only logged, and a service
failure it held is told once it takes over, if the service still fails."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable

from bot.inbox.render import build_room_notice
from bot.matrix.account import SEND_ERRORS, MatrixAccount
from core import strings
from core.config import Settings

log = logging.getLogger(__name__)

# Reports waiting at most; the oldest go first when more come.
MOST_HELD = 20
# How long a report waits for the bot to be in the admin room, and how often it looks.
WAIT_SECONDS = 300
RETRY_SECONDS = 2.0


def decide_admin_language(settings: Settings) -> str | None:
    """The language reports are written in: the admin room's, when it has one."""
    room = settings.bot.admin_room
    return settings.room(room).language if room else None


class AdminReports:
    def __init__(self, admin_room: Callable[[], str | None]) -> None:
        self.admin_room = admin_room
        self.matrix: MatrixAccount | None = None
        self._queue: deque[tuple[str, float]] = deque(maxlen=MOST_HELD)
        self._waiting = asyncio.Event()
        # Services whose failure came while this process was not connected.
        self._held_failures: set[str] = set()

    def tell(self, text: str) -> None:
        """Queue a report for the admin room (none configured: nothing)."""
        if not self.admin_room():
            return
        if self.matrix is None:
            log.warning("not reported to the admin room (this process is not connected): %s", text)
            return
        self._queue.append((text, time.monotonic()))
        self._waiting.set()

    async def service_failing(self, name: str, reason: str) -> None:
        """A service or loop that just started failing (core/supervise.py's report)."""
        if self.matrix is None:
            self._held_failures.add(name)
            return
        self.tell(strings.SERVICE_FAILING.format(service=name, reason=reason))

    def connected(self, matrix: MatrixAccount, failing: dict[str, str]) -> None:
        """This process is the active one now: held failures still failing are told."""
        self.matrix = matrix
        for name in sorted(self._held_failures & failing.keys()):
            self.tell(strings.SERVICE_FAILING.format(service=name, reason=failing[name]))
        self._held_failures.clear()

    def disconnected(self) -> None:
        self.matrix = None

    async def run(self) -> None:
        """Send what is queued, in order, for as long as the process runs."""
        while True:
            await self._waiting.wait()
            self._waiting.clear()
            while self._queue:
                text, since = self._queue[0]
                if await self._send(text) or time.monotonic() - since > WAIT_SECONDS:
                    self._queue.popleft()
                else:
                    await asyncio.sleep(RETRY_SECONDS)

    async def _send(self, text: str) -> bool:
        """Whether the report is done with: sent, or nowhere to send it."""
        room, matrix = self.admin_room(), self.matrix
        if not room or matrix is None:
            return True
        if matrix.room(room) is None:
            return False  # not joined yet (the invite of a first start is being taken)
        try:
            await matrix.send(room, build_room_notice(text))
        except SEND_ERRORS as exc:
            # The account retried already: a refusal is not tried again.
            log.warning("could not report to the admin room %s: %s", room, exc)
        return True
