"""The sync loop: reads the homeserver's stream, decides each event once (bot/inbox/router.py)
and stores the batch with the decisions in the inbox for the workers; the observers see
each batch (who is in the rooms, read receipts) and each message (the conversation)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace

from bot.inbox.backfill import Gap, fetch_gap
from bot.inbox.decisions import FollowRedaction, Ignore, decide_handling, encode_decision
from bot.inbox.events import IncomingMessage
from bot.inbox.invites import decide_invite
from bot.inbox.router import Router
from bot.inbox.state import Lease, PendingEvent, StateStore, now_ms
from bot.inbox.workers import AnswerWorkers
from bot.matrix.account import SEND_ERRORS, MatrixAccount
from bot.matrix.backoff import retry_wait
from bot.matrix.types import EventSource, SyncBatch
from bot.settings_holder import SettingsHolder
from core import strings
from core.health import Check

log = logging.getLogger(__name__)

# Sees each batch before its events are decided (and before the next one is read).
BatchObserver = Callable[[SyncBatch], Awaitable[None]]
# Sees each message, and whether the bot replies to it, as the batch is decided.
MessageObserver = Callable[[IncomingMessage, bool], Awaitable[None]]
# Told that a room's messages sent at a time (ms) or before may be missing from what the
# sync showed: not decrypted, or in a gap that could not be read (the conversation's
# lines, bot/features/answers/conversation.py). Never waits.
LeftOutObserver = Callable[[str, int], None]
# Told, after each batch is decided, when (time.time()) its request was sent: every
# message sent before then has been seen (the conversation's lines). Never waits.
SyncedObserver = Callable[[float], None]

SYNC_TIMEOUT_MS = 30_000
# A sync returns within its 30 s long-poll; longer silence means it is stuck.
SYNC_STALE_SECONDS = 90
# A batch whose left-out messages cannot be read is read again this many times.
GAP_ATTEMPTS = 3


class SyncLoop:
    def __init__(
        self,
        matrix: MatrixAccount,
        state: StateStore,
        router: Router,
        settings: SettingsHolder,
        workers: AnswerWorkers,
        lease: Lease | None = None,
    ) -> None:
        self.matrix = matrix
        self.state = state
        self.router = router
        self.on_batch: list[BatchObserver] = []
        self.on_message: list[MessageObserver] = []
        self.on_left_out: list[LeftOutObserver] = []
        self.on_synced: list[SyncedObserver] = []
        # Told of each redaction as it is decided, before the inbox follows it.
        self.on_redaction: list[Callable[[str, str], None]] = []
        self.settings = settings
        self.workers = workers
        # Batches are stored only while this process holds the account's lease.
        self.lease = lease
        self.ready = asyncio.Event()
        self.last_sync: float | None = None  # time.monotonic() of the last good sync
        # The last sync failed, or the homeserver could not be reached since the last good one.
        self.failing = False
        self._gap_failures = 0

    def check(self) -> Check:
        """For /health: failing when the last sync failed, when a request had to wait for
        the homeserver since it (an outage shows within seconds), or when none came for
        longer than a long-poll takes (a stuck loop)."""
        last = self.last_sync
        retried = self.matrix.last_retry
        stuck = last is None or time.monotonic() - last > SYNC_STALE_SECONDS
        waiting = retried is not None and last is not None and retried > last
        return "failing" if self.failing or stuck or waiting else "ok"

    async def run(self) -> None:
        token = await self.state.sync_token()
        failures = 0
        while True:
            # The first sync asks for full state: nio keeps room state (members,
            # encryption) in memory only, and sending into a room needs it.
            asked_at = time.time()
            try:
                batch = await self.matrix.sync(
                    token,
                    timeout_ms=0 if not self.ready.is_set() else SYNC_TIMEOUT_MS,
                    full_state=not self.ready.is_set(),
                )
            except SEND_ERRORS as exc:
                failures += 1
                self.failing = True
                delay = retry_wait(failures)
                log.warning("sync failed (%s); retrying in %.1f s", exc, delay)
                await asyncio.sleep(delay)
                continue
            failures = 0
            self.failing = False
            self.last_sync = time.monotonic()
            for observe in self.on_batch:
                await observe(batch)
            await self._handle_invites(batch)
            fresh = await self.state.store_batch(
                batch.next_batch, await self._addressed(batch, token), self.lease
            )
            token = batch.next_batch
            for note in self.on_synced:
                note(asked_at)
            # Answered messages' ids serve the edit window only.
            window_ms = int(self.settings.current.bot.edit_window_seconds * 1000)
            await self.state.purge_done(now_ms() - window_ms)
            if not self.ready.is_set():
                self.ready.set()
                log.info("ready: synced with %s", self.matrix.homeserver)
            if fresh:
                self.workers.wake()
            try:
                await self.matrix.maintain_keys()
            except SEND_ERRORS as exc:
                log.warning("encryption keys were not kept up to date: %s", exc)

    async def _addressed(self, batch: SyncBatch, since: str | None) -> list[PendingEvent]:
        """The events of the batch that the bot must act on, with what to do (decided
        once, here: the workers and any process taking over carry it out). Messages are
        also kept as the conversation's context as they come."""
        pending: list[PendingEvent] = []
        addressed: set[str] = set()
        for room in batch.joined:
            room_id = room.room_id
            await self._note_invite(room_id, [*room.state, *room.timeline])
            events = room.timeline
            left_out = max(room.undecrypted_ms, default=None)
            if room.limited and since and room.prev_batch:
                gap = await self._gap(room_id, room.prev_batch, since, events)
                events = [*gap.events, *events]
                if gap.left_out_ms is not None:
                    left_out = max(gap.left_out_ms, left_out or 0)
            if left_out is not None:
                for note in self.on_left_out:
                    note(room_id, left_out)
            for event in events:
                candidate = PendingEvent(room_id, event)
                message, action = await self.router.route(candidate, addressed)
                replied = decide_handling(action) == "reply"
                if message is not None:
                    for observe in self.on_message:
                        await observe(message, replied)
                if isinstance(action, FollowRedaction):
                    for redacted in self.on_redaction:
                        redacted(room_id, action.redacts)
                if isinstance(action, Ignore):
                    log.debug("ignoring %s: %s", event.get("event_id"), action.reason)
                    continue
                pending.append(replace(candidate, decision=encode_decision(action)))
                if message is not None and replied:
                    addressed.add(message.event_id)
        return pending

    async def _gap(
        self, room_id: str, prev_batch: str, since: str, timeline: list[EventSource]
    ) -> Gap:
        """The room's messages the sync left out. A failure fails the batch (it is read
        again), but not for ever: one room the homeserver keeps refusing must not stop
        the bot in every room (everything before its `timeline` is then missing)."""
        try:
            gap = await fetch_gap(self.matrix, room_id, prev_batch, since)
        except SEND_ERRORS as exc:
            self._gap_failures += 1
            if self._gap_failures < GAP_ATTEMPTS:
                raise
            log.error("messages sent to %s while the bot was away were not read: %s", room_id, exc)
            first = timeline[0].get("origin_server_ts") if timeline else None
            gap = Gap([], first - 1 if isinstance(first, int) else now_ms())
        self._gap_failures = 0
        return gap

    async def _note_invite(self, room_id: str, events: list[EventSource]) -> None:
        """The bot's own invite, as the first sync after joining shows it (the invite
        itself, stripped state, has no time)."""
        for event in events:
            content = event.get("content")
            if (
                event.get("type") == "m.room.member"
                and event.get("state_key") == self.matrix.user_id
                and isinstance(content, dict)
                and content.get("membership") == "invite"
            ):
                await self.state.note_invited(room_id, int(event.get("origin_server_ts", 0)))

    async def _handle_invites(self, batch: SyncBatch) -> None:
        allowed = self.settings.current.invites
        for invite in batch.invites:
            room_id, inviter = invite.room_id, invite.inviter
            if decide_invite(inviter, allowed):
                if await self.matrix.join(room_id):
                    await self.state.record_join(room_id, now_ms(), invite.is_direct)
                    log.info("joined %s, invited by %s", room_id, inviter)
            else:
                await self.matrix.reject_invite(room_id, strings.INVITE_REFUSED)
                log.info("refused the invite to %s from %s", room_id, inviter)
