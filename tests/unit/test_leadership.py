"""One active process per account: a standby waits, takes over when the lease ends or is
given up, and an active process that loses the lease stops; on both store backends."""

from __future__ import annotations

import asyncio

import pytest

from bot.inbox.state import LeaseLost, SqlStateStore
from bot.runtime.leadership import Leadership

ACCOUNT = "@bot:example.org"


async def test_a_standby_waits_for_the_lease_and_takes_it_when_it_is_given_up(open_database):
    active = Leadership(await SqlStateStore.open(await open_database()), ACCOUNT, 2)
    standby = Leadership(await SqlStateStore.open(await open_database()), ACCOUNT, 2)
    await active.acquire()
    keeping = asyncio.create_task(active.keep())
    waiting = asyncio.create_task(standby.acquire())
    await asyncio.sleep(2.5)  # longer than the lease: renewals keep it the active's
    assert not waiting.done() and not standby.active and active.active
    keeping.cancel()
    await active.release()
    async with asyncio.timeout(5):
        await waiting
    assert standby.active and not active.active


async def test_a_killed_active_processs_lease_runs_out_and_it_would_stop_itself(open_database):
    active = Leadership(await SqlStateStore.open(await open_database()), ACCOUNT, 2)
    standby = Leadership(await SqlStateStore.open(await open_database()), ACCOUNT, 2)
    await active.acquire()
    # Killed: nothing renews. The standby takes over once the lease has run out...
    async with asyncio.timeout(5):
        await standby.acquire()
    # ...and the old one, were it only paused, finds out at its next renewal.
    with pytest.raises(LeaseLost):
        async with asyncio.timeout(5):
            await active.keep()
    assert not active.active and active.remaining() == 0


class CancelledAsItRenews:
    """A lease store whose renewal ends at the very moment its process is stopped."""

    def __init__(self) -> None:
        self.keeping: asyncio.Task | None = None
        self.calls = 0

    async def take_lease(self, lease, seconds: float) -> bool:
        self.calls += 1
        if self.calls == 2 and self.keeping is not None:
            self.keeping.cancel()  # the stop comes as the renewal returns
        return True

    async def release_lease(self, lease) -> None:
        return None


async def test_a_stop_that_comes_as_the_lease_is_renewed_stops_the_renewals():
    store = CancelledAsItRenews()
    leadership = Leadership(store, ACCOUNT, 0.3)  # type: ignore[arg-type]
    await leadership.acquire()
    store.keeping = keeping = asyncio.create_task(leadership.keep())
    done, _ = await asyncio.wait({keeping}, timeout=5)
    assert done == {keeping} and keeping.cancelled(), "the renewals went on after the stop"
