"""A fixed number of answer workers take the inbox's pending messages in order of arrival.

The sync loop stores messages (bot/inbox/state.py) and wakes the feeder; the feeder reads them
from the store a few at a time, so a backlog of thousands after a reconnect costs a row
each in the database, not a task each in memory. Each message runs as the dispatcher's
task: a worker stopped at shutdown leaves it to finish within the grace period.

A redaction goes first: nothing after it is started before it was followed everywhere
(and, when a store failed, before it was followed on a later try), so that no answer
started after a redaction arrived can reuse the redacted text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from bot.inbox.state import PendingEvent, StateStore
from core.storage.database import StorageError

log = logging.getLogger(__name__)
RETRY_SECONDS = 2
# The stored decisions that later events wait for (see bot/inbox/decisions.py).
BARRIERS = frozenset({"FollowRedaction"})


def decide_waits_for(event: PendingEvent) -> bool:
    """Whether later events must wait until this one is done."""
    return bool(event.decision) and (event.decision or {}).get("kind") in BARRIERS


class AnswerWorkers:
    def __init__(
        self,
        state: StateStore,
        start: Callable[[PendingEvent], Awaitable[bool]],
        count: int,
        prepare: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        self.state = state
        self.start = start
        self.count = count
        # Run once before the first event is taken (bot/inbox/upgrade.py).
        self.prepare = prepare
        # After the store failed, before the messages given back are read again.
        self.retry_seconds: float = RETRY_SECONDS
        self._wake = asyncio.Event()
        # Messages a worker gave back (the store failed), by arrival: read again, alone.
        self._again: set[int] = set()
        # Messages queued or being handled, by arrival.
        self._taken: set[int] = set()
        # Set each time a worker finishes one.
        self._finished = asyncio.Event()
        # Of `_again`, those later events wait for.
        self._blocking: set[int] = set()

    def wake(self) -> None:
        """New messages are in the inbox."""
        self._wake.set()

    async def run(self) -> None:
        """Feed the workers until cancelled; pending messages of earlier runs come first."""
        if self.prepare is not None:
            await self.prepare()
            self.prepare = None
        queue: asyncio.Queue[PendingEvent] = asyncio.Queue(maxsize=self.count)
        # What an earlier run left in its queue is read again (what it left running, the
        # dispatcher knows and skips).
        self._taken = set()
        async with asyncio.TaskGroup() as group:
            for _ in range(self.count):
                group.create_task(self._work(queue))
            await self._feed(queue)

    async def _feed(self, queue: asyncio.Queue[PendingEvent]) -> None:
        after = 0
        while True:
            if self._again:
                await asyncio.sleep(self.retry_seconds)  # the store failed a moment ago
                await self._feed_again(queue)
                if self._blocking:
                    continue  # nothing after a redaction not followed yet
            # Cleared before reading, so that a wake-up during the read is not lost.
            self._wake.clear()
            try:
                batch = await self.state.pending_events(after=after, limit=self.count)
            except StorageError as exc:
                # The messages wait in the inbox; nothing in flight is stopped for this.
                log.warning("the inbox cannot be read (%s); trying again", exc)
                await asyncio.sleep(self.retry_seconds)
                continue
            if not batch:
                await self._wake.wait()
                continue
            for event in batch:
                after = event.arrival
                if event.arrival in self._taken:
                    continue
                self._taken.add(event.arrival)
                await queue.put(event)
                if decide_waits_for(event) and not await self._done(event.arrival):
                    break

    async def _work(self, queue: asyncio.Queue[PendingEvent]) -> None:
        while True:
            event = await queue.get()
            try:
                handled = await self.start(event)
            finally:
                self._taken.discard(event.arrival)
                self._finished.set()
            if not handled:
                self._again.add(event.arrival)
                if decide_waits_for(event):
                    self._blocking.add(event.arrival)
                self._wake.set()

    async def _done(self, arrival: int) -> bool:
        """Wait until the event is handled; False when it was given back (to try again)."""
        while arrival in self._taken:
            self._finished.clear()
            await self._finished.wait()
        return arrival not in self._again

    async def _feed_again(self, queue: asyncio.Queue[PendingEvent]) -> None:
        """The given-back messages, each read again from the store (its reply may have
        been recorded meanwhile), if still pending."""
        again, self._again = sorted(self._again), set()
        blocking, self._blocking = self._blocking, set()
        for arrival in again:
            try:
                rows = await self.state.pending_events(after=arrival - 1, limit=1)
            except StorageError:
                self._again.add(arrival)
                if arrival in blocking:
                    # Still a barrier: nothing after it is fed before it is followed.
                    self._blocking.add(arrival)
                    self._again.update(later for later in again if later > arrival)
                    return
                continue
            if rows and rows[0].arrival == arrival and arrival not in self._taken:
                self._taken.add(arrival)
                await queue.put(rows[0])
                if decide_waits_for(rows[0]) and not await self._done(arrival):
                    self._blocking.add(arrival)
                    self._again.update(later for later in again if later > arrival)
                    return
