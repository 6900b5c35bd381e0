"""The answer workers: the inbox in order of arrival, a few at a time, and a message the
store failed to finish is taken again; on both store backends."""

from __future__ import annotations

import asyncio

from bot.inbox.state import PendingEvent, SqlStateStore
from bot.inbox.workers import AnswerWorkers
from core.storage.database import StorageError


def message(n: int) -> PendingEvent:
    return PendingEvent("!room", {"event_id": f"$m{n}", "type": "m.room.message"})


async def test_messages_are_taken_in_order_a_few_at_a_time_and_a_failed_one_again(
    open_database,
):
    store = await SqlStateStore.open(await open_database())
    await store.store_batch("t1", [message(n) for n in range(20)])
    started: list[str] = []
    running, most = 0, 0
    failed_once: set[str] = set()

    changed = asyncio.Event()

    async def start(event: PendingEvent) -> bool:
        nonlocal running, most
        event_id = event.source["event_id"]
        started.append(event_id)
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.01)
        running -= 1
        if event_id == "$m7" and event_id not in failed_once:
            failed_once.add(event_id)
            return False  # the store failed: it stays pending
        await store.mark_done(event_id)
        changed.set()
        return True

    async def until(condition) -> None:
        while True:
            changed.clear()  # before looking, so that a change while looking is seen
            if await condition():
                return
            await changed.wait()

    async def nothing_pending() -> bool:
        return not await store.pending_events()

    async def last_started() -> bool:
        return "$m20" in started

    workers = AnswerWorkers(store, start, count=3)
    workers.retry_seconds = 0.01
    task = asyncio.create_task(workers.run())
    try:
        async with asyncio.timeout(10):
            await until(nothing_pending)
            await store.store_batch("t2", [message(20)])
            workers.wake()
            await until(last_started)
    finally:
        task.cancel()
    first = [event for n, event in enumerate(started) if event not in started[:n]]
    assert first == [f"$m{n}" for n in range(21)], "started in order of arrival"
    assert started.count("$m7") == 2 and len(started) == 22
    assert most <= 3


class InboxThatFailsOnce:
    """The inbox, whose reading one given-back event again fails once (a database blip)."""

    def __init__(self, store: SqlStateStore) -> None:
        self.store = store
        self.failed = False

    async def pending_events(self, after: int = 0, limit: int | None = None):
        if limit == 1 and not self.failed:
            self.failed = True
            raise StorageError("the database is away")
        return await self.store.pending_events(after=after, limit=limit)


async def test_nothing_after_a_redaction_starts_before_it_is_followed(open_database):
    """The redaction's following fails once, and reading it again fails once too: the
    message after it still waits until the redaction has been followed."""
    store = await SqlStateStore.open(await open_database())
    redaction = PendingEvent(
        "!room",
        {"event_id": "$x", "type": "m.room.redaction", "redacts": "$m1"},
        decision={"kind": "FollowRedaction", "redacts": "$m1"},
    )
    await store.store_batch("t1", [message(1), redaction, message(3)])
    steps: list[tuple[str, str]] = []
    done = asyncio.Event()

    async def start(event: PendingEvent) -> bool:
        event_id = event.source["event_id"]
        steps.append(("start", event_id))
        if event_id == "$x" and steps.count(("start", "$x")) == 1:
            return False  # the store failed: given back
        await store.mark_done(event_id)
        steps.append(("finish", event_id))
        if sum(step == "finish" for step, _ in steps) == 3:
            done.set()
        return True

    workers = AnswerWorkers(InboxThatFailsOnce(store), start, count=3)  # type: ignore[arg-type]
    workers.retry_seconds = 0.01
    task = asyncio.create_task(workers.run())
    try:
        async with asyncio.timeout(10):
            await done.wait()
    finally:
        task.cancel()
    assert steps.index(("start", "$m3")) > steps.index(("finish", "$x")), steps
