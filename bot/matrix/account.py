"""The bot's Matrix account as the rest of the bot sees it: typed reads, fenced writes.

Two implementations: `NioAccount` (bot/matrix/nio_account.py) on the homeserver, and
`FakeAccount` (bot/matrix/fake.py) in memory, for tests of the bot's logic. Every write
of either goes through `decide_write` (bot/matrix/fence.py) first and raises
WriteRefused when it may not go.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from bot.matrix.fence import WriteKind, decide_write
from bot.matrix.types import (
    EventSource,
    MatrixError,
    Media,
    MessagesPage,
    RoomState,
    SyncBatch,
    WriteRefused,
)
from core.ids import RoomID, UserID

log = logging.getLogger(__name__)

# A typing notice lasts 30 s; it is renewed before it runs out.
TYPING_REFRESH_SECONDS = 20


class MatrixAccount(Protocol):
    user_id: UserID
    homeserver: str
    # Seconds this process may still write (it holds the account's lease); inf without a
    # lease. Every write runs within this deadline (see write_deadline).
    lease_left: Callable[[], float]

    @property
    def encryption_on(self) -> bool:
        """Whether the account encrypts (and rooms it creates are encrypted)."""
        ...

    @property
    def last_retry(self) -> float | None:
        """time.monotonic() of the last request that had to be tried again."""
        ...

    # Reads: the rooms as the last sync left them, and the homeserver's events.
    def rooms(self) -> Mapping[RoomID, RoomState]:
        """Every room the bot is in (joined or invited to)."""
        ...

    def room(self, room_id: str) -> RoomState | None: ...
    def room_name(self, room_id: str) -> str:
        """The room's name as clients show it (its id when the bot does not know it)."""
        ...

    def member_name(self, room_id: str, user_id: str) -> str | None:
        """The member's display name in the room, as clients show it; None: unknown."""
        ...

    async def sync(self, since: str | None, timeout_ms: int, full_state: bool) -> SyncBatch:
        """The next batch; raises MatrixError when the homeserver fails."""
        ...

    async def device_trusted(self, user_id: str, device_id: str) -> bool:
        """Whether the person cross-signed this device of theirs (fails closed)."""
        ...

    async def cross_sign(self, data_dir: Path, password: str | None) -> None:
        """Sign the bot's own device with the account's cross-signing keys, made on the
        first start; raises CrossSigningError when the homeserver refuses."""
        ...

    async def fetch_event(self, room_id: str, event_id: str) -> EventSource | None:
        """The event as the homeserver has it now (decrypted); None when it cannot say."""
        ...

    async def is_gone(self, room_id: str, event_id: str) -> bool:
        """Whether one of the bot's messages can no longer be edited into view."""
        ...

    async def fetch_messages(
        self,
        room_id: str,
        start: str | None,
        end: str | None,
        limit: int,
        *,
        ask_keys: bool = False,
    ) -> MessagesPage:
        """A page of the room's events going back from `start` (None: from the last
        sync) to `end` at most, without those it cannot decrypt (whose keys it asks the
        senders' devices for when `ask_keys`: messages the bot must answer); raises
        MatrixError."""
        ...

    async def messages_token_before(self, room_id: str, ts_ms: int) -> str | None:
        """A token from which `fetch_messages` reads the room back from about `ts_ms`:
        just before the event sent at `ts_ms` or soonest after, in the order the
        homeserver stored the room (an event sent a little earlier but stored later is
        after the token). None when there is no such event, or the homeserver cannot
        say: read back from the last sync instead."""
        ...

    async def display_name(self) -> str | None: ...

    async def fetch_media(self, media: Media, max_bytes: int | None = None) -> bytes:
        """A message's file through the homeserver's (authenticated) media API, decrypted
        when it comes with its key; raises MatrixError, and MediaTooLarge as soon as more
        than `max_bytes` arrived (or were announced)."""
        ...

    # Writes: each one fenced (lease, room known, encryption).
    async def send(
        self,
        room_id: str,
        content: dict[str, Any],
        *,
        sealed: bool = False,
        txn_id: str | None = None,
    ) -> str:
        """Post a message event; returns its event id. A `txn_id` the homeserver has
        seen from this session gives the event it made then, not a second one."""
        ...

    async def send_file(
        self, room_id: str, name: str, data: bytes, mimetype: str, *, sealed: bool = False
    ) -> str: ...
    async def redact(self, room_id: str, event_id: str, reason: str) -> None: ...
    async def typing(self, room_id: str, active: bool) -> None: ...
    async def create_room(self, *, invite: list[str], direct: bool) -> RoomID:
        """A private room, encrypted whenever the account encrypts."""
        ...

    async def join(self, room_id: str) -> bool: ...
    async def reject_invite(self, room_id: str, reason: str) -> None: ...
    async def maintain_keys(self) -> None:
        """Upload, query and claim encryption keys as the last sync asked."""
        ...

    async def close(self) -> None: ...


def build_shown_names(
    account: MatrixAccount, room_id: str, senders: Iterable[str]
) -> dict[str, str]:
    """Each sender as the room shows them (their display name; nio tells two "Alex"
    apart), else their id: how summaries and catch-ups name people."""
    return {sender: account.member_name(room_id, sender) or sender for sender in set(senders)}


def may_send(account: MatrixAccount) -> bool:
    """Whether this process may still write (it holds the account's lease)."""
    return account.lease_left() > 0


@contextlib.asynccontextmanager
async def write_deadline(
    account: MatrixAccount, kind: WriteKind, room_id: str, sealed: bool = False
) -> AsyncIterator[None]:
    """A write that passed the fence and that ends before the lease does: a request the
    homeserver (or a proxy) holds, or the client retries, is abandoned when the lease
    runs out, so that it cannot land after a standby took over; a renewal that comes back
    meanwhile lets it go on. Raises WriteRefused."""
    check_write(account, kind, room_id, sealed)
    loop = asyncio.get_running_loop()
    deadline = asyncio.timeout(None)
    checking: asyncio.TimerHandle | None = None

    def look_at_the_lease() -> None:
        # The lease may have been renewed while the write was held: it ends with the
        # lease as it stands now, not as it stood when the write began.
        nonlocal checking
        try:
            left = account.lease_left()
        except Exception:  # a lease that cannot be read is not held: fail closed
            log.exception("the lease could not be read during a write")
            left = 0.0
        if left <= 0:
            deadline.reschedule(loop.time())
        elif not math.isinf(left):
            checking = loop.call_later(left, look_at_the_lease)

    try:
        async with deadline:
            look_at_the_lease()
            yield
    except TimeoutError:
        if deadline.expired():
            raise WriteRefused("the lease ran out during the write: it was abandoned") from None
        raise
    finally:
        if checking is not None:
            checking.cancel()


def check_write(
    account: MatrixAccount, kind: WriteKind, room_id: str, sealed: bool = False
) -> None:
    """The fence every implementation's writes pass: raises WriteRefused when the write
    may not go (see bot/matrix/fence.py)."""
    refused = decide_write(
        kind=kind,
        holds_lease=may_send(account),
        room=account.room(room_id),
        sealed=sealed,
        encryption_on=account.encryption_on,
        room_id=room_id,
    )
    if refused:
        raise WriteRefused(refused)


# What a call to the homeserver raises (implementations wrap their transport's errors).
SEND_ERRORS = (MatrixError,)


@contextlib.asynccontextmanager
async def typing_while(account: MatrixAccount, room_id: str) -> AsyncIterator[None]:
    """Show the bot typing in the room for as long as the block runs."""

    async def keep_typing() -> None:
        while True:
            # A notice that fails (the lease lost, the homeserver away) is no reason to
            # stop the answer it decorates.
            with contextlib.suppress(MatrixError):
                await account.typing(room_id, True)
            await asyncio.sleep(TYPING_REFRESH_SECONDS)

    typing = asyncio.create_task(keep_typing())
    try:
        yield
    finally:
        typing.cancel()
        with contextlib.suppress(MatrixError):
            await account.typing(room_id, False)
