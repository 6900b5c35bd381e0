"""One active process per Matrix account: the others stand by until its lease runs out.

The lease is a row in the shared state store (bot/inbox/state.py). The active process renews
it every third of its length; if it cannot (the database is unreachable, or another
process took it), it stops syncing and answering before the lease can have run out, so
that two processes never answer at once. A standby tries to take the lease a few times
per lease length; a process stopped cleanly gives it up at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

from bot.inbox.dispatcher import Dispatcher
from bot.inbox.state import Lease, LeaseLost, LeaseStore
from core.storage.database import StorageError

log = logging.getLogger(__name__)

# The active process stops this long before its lease would end, for a clock that
# drifts or a renewal that comes back late.
SAFETY_MARGIN = 0.2  # of the lease's length
# After a takeover failed for a passing reason, before the lease is asked for again.
TAKEOVER_RETRY_SECONDS = 5.0


def own_name() -> str:
    """This process, as the lease names it (host, pid and a random part for restarts)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Leadership:
    def __init__(
        self,
        store: LeaseStore,
        account: str,
        seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.lease = Lease(account, own_name())
        self.seconds = seconds
        self.clock = clock
        self.active = False
        # Until when (clock()) this process may act as the active one.
        self._valid_until = 0.0

    def remaining(self) -> float:
        """Seconds this process may still act, with the safety margin taken off."""
        return max(0.0, self._valid_until - self.clock())

    async def _take(self, within: float) -> bool | None:
        """Take or renew the lease: None when the store could not be asked in time."""
        started = self.clock()
        try:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for returns the result of
            # a call that ends as the task is cancelled, losing the cancellation (a stop
            # then waited for ever on this loop).
            async with asyncio.timeout(max(within, 0.05)):
                taken = await self.store.take_lease(self.lease, self.seconds)
        except (StorageError, TimeoutError) as exc:
            log.warning("the syncing lease could not be asked for: %s", type(exc).__name__)
            return None
        if taken:
            self._valid_until = started + self.seconds * (1 - SAFETY_MARGIN)
        return taken

    async def acquire(self) -> None:
        """Wait until this process holds the lease."""
        announced = False
        while not await self._take(self.seconds / 3):
            if not announced:
                log.info("standing by: another process syncs %s", self.lease.name)
                announced = True
            await asyncio.sleep(self.seconds / 5)
        self.active = True
        log.info("active: this process syncs %s", self.lease.name)

    async def keep(self) -> None:
        """Renew the lease until cancelled; raises LeaseLost when this process must stop."""
        while True:
            await asyncio.sleep(min(self.seconds / 3, self.remaining()))
            # Never waiting past the lease's end for an answer from the store.
            taken = await self._take(self.remaining())
            # The store cannot be asked: go on while the lease surely holds, trying again.
            while taken is None and self.remaining() > 0:
                await asyncio.sleep(min(1.0, self.remaining()))
                taken = await self._take(self.remaining())
            if not taken:
                self.active = False
                self._valid_until = 0.0  # nothing more may be sent, not even in a grace period
                log.warning("another process may sync %s now: this one stops", self.lease.name)
                raise LeaseLost(self.lease.name)

    async def renew(self) -> None:
        """Renew the lease once, now (renewals stop with the loops at a shutdown). The
        store is given a renewal's interval to answer, also when the lease ran out here
        meanwhile: what a late answer grants counts from when it was asked."""
        if await self._take(self.seconds / 3) is False:
            self.active = False
            self._valid_until = 0.0  # another process holds it: nothing more is sent

    async def release(self) -> None:
        """Give the lease up, so that a standby takes over at once."""
        self.active = False
        self._valid_until = 0.0
        try:
            await self.store.release_lease(self.lease)
        except StorageError as exc:
            log.warning("the syncing lease was not given up (%s); it runs out", exc)


async def lead_when_holding(
    leadership: Leadership,
    run_active: Callable[[], Coroutine[Any, Any, None]],
    retry_seconds: float = TAKEOVER_RETRY_SECONDS,
) -> None:
    """Stand by until this process holds the lease, then `run_active` until it loses it
    (and stand by again). `run_active` gives the lease up when it ends. A store failing
    while it runs (the database away as a standby takes over) is a passing fault, not
    the end of the process: it stands by again, so another process may take over."""
    while True:
        try:
            # In a task of its own: Python 3.11's TaskGroup leaves its task's cancellation
            # count raised when a child fails after the group's body has returned (it
            # uncancels only a body it interrupted), and this task would read the count
            # below as a stop. A stop cancels that task through the await, as before.
            # Standing by in it too: a stop between taking the lease and `run_active`
            # starting would leave the lease held until it ran out.
            await asyncio.create_task(_take_then_run(leadership, run_active))
        except* LeaseLost:
            log.warning("lost the syncing lease: standing by")
        except* StorageError as failed:
            log.warning(
                "could not go on as the active process (%s): standing by again",
                "; ".join(str(exc) for exc in failed.exceptions),
            )
            await asyncio.sleep(retry_seconds)
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            # A stop that came while the lease was lost: the TaskGroup raised the loss
            # alone, and standing by would keep the process from ever stopping.
            raise asyncio.CancelledError


async def _take_then_run(
    leadership: Leadership, run_active: Callable[[], Coroutine[Any, Any, None]]
) -> None:
    await leadership.acquire()
    await run_active()


async def drain_while_held(
    dispatcher: Dispatcher, leadership: Leadership, grace_seconds: float
) -> None:
    """An active process's shutdown: answers in flight get their grace, and those cut off
    their restart notice, within a lease renewed once more. Without it the notice hung on
    when the lease was last renewed, and a stop for maintenance left "Working on it…" in
    the room until the restart."""
    await leadership.renew()
    # Half of what remains at most: the other half is for the notices of those cut off.
    await dispatcher.drain(min(grace_seconds, leadership.remaining() / 2))
