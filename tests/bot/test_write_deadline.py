"""A write ends before the lease does (bot/matrix/account.py write_deadline): abandoned
when the lease runs out while it is held, carried on when the lease was renewed."""

from __future__ import annotations

import asyncio
import time

import pytest

from bot.matrix.account import write_deadline
from bot.matrix.fake import FakeAccount
from bot.matrix.types import WriteRefused


class Lease:
    """A lease as the account reads it, renewed by the test; `read` is set each time the
    write's deadline looks at it."""

    def __init__(self, seconds: float) -> None:
        self.ends = time.monotonic() + seconds
        self.read = asyncio.Event()

    def left(self) -> float:
        self.read.set()
        return self.ends - time.monotonic()


async def test_a_write_held_past_the_lease_is_abandoned():
    account = FakeAccount()
    lease = Lease(0.2)
    account.lease_left = lease.left
    held = asyncio.Event()
    with pytest.raises(WriteRefused, match="lease ran out"):
        async with asyncio.timeout(10), write_deadline(account, "room", ""):
            await held.wait()  # the network holds it


async def test_a_write_goes_on_when_the_lease_was_renewed_while_it_was_held():
    account = FakeAccount()
    lease = Lease(0.2)
    account.lease_left = lease.left
    released = asyncio.Event()

    async def write() -> str:
        async with write_deadline(account, "room", ""):
            await released.wait()
        return "written"

    writing = asyncio.create_task(write())
    await asyncio.sleep(0)  # it started, with 0.2 s of lease left
    lease.ends = time.monotonic() + 30  # the renewal came back meanwhile
    lease.read.clear()
    # The first deadline passed: the write looked at the lease again and went on.
    await asyncio.wait_for(lease.read.wait(), 10)
    assert not writing.done()
    released.set()
    assert await asyncio.wait_for(writing, 10) == "written"
