"""The sync loop: reads the homeserver's stream, hands new messages to the dispatcher."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace

from nio import Event, InviteMemberEvent, MegolmEvent, RoomMemberEvent, SyncError, SyncResponse

from bot.backfill import fetch_gap
from bot.client import retry_wait
from bot.dispatcher import Dispatcher
from bot.events import parse_redaction
from bot.invites import decide_invite
from bot.matrix import SEND_ERRORS, MatrixIO
from bot.routing import Ignore, encode_action
from bot.settings_holder import SettingsHolder
from bot.state import Lease, PendingEvent, StateStore, now_ms
from bot.workers import AnswerWorkers
from core import strings
from core.health import Check
from core.ids import UserID

log = logging.getLogger(__name__)

SYNC_TIMEOUT_MS = 30_000
# A sync returns within its 30 s long-poll; longer silence means it is stuck.
SYNC_STALE_SECONDS = 90
MAX_REPORTED_SESSIONS = 10_000
# A batch whose left-out messages cannot be read is read again this many times.
GAP_ATTEMPTS = 3


class SyncLoop:
    def __init__(
        self,
        matrix: MatrixIO,
        state: StateStore,
        dispatcher: Dispatcher,
        settings: SettingsHolder,
        workers: AnswerWorkers,
        lease: Lease | None = None,
    ) -> None:
        self.matrix = matrix
        self.state = state
        self.dispatcher = dispatcher
        self.settings = settings
        self.workers = workers
        # Batches are stored only while this process holds the account's lease.
        self.lease = lease
        self.ready = asyncio.Event()
        self.last_sync: float | None = None  # time.monotonic() of the last good sync
        # The last sync failed, or the homeserver could not be reached since the last good one.
        self.failing = False
        self._undecryptable_sessions: set[str] = set()
        self._gap_failures = 0
        self._key_requests: set[asyncio.Task] = set()

    def check(self) -> Check:
        """For /health: failing when the last sync failed, when a request had to wait for
        the homeserver since it (an outage shows within seconds), or when none came for
        longer than a long-poll takes (a stuck loop)."""
        last = self.last_sync
        retried = getattr(self.matrix.client, "last_retry", None)
        stuck = last is None or time.monotonic() - last > SYNC_STALE_SECONDS
        waiting = retried is not None and last is not None and retried > last
        return "failing" if self.failing or stuck or waiting else "ok"

    async def run(self) -> None:
        token = await self.state.sync_token()
        failures = 0
        while True:
            # The first sync asks for full state: nio keeps room state (members,
            # encryption) in memory only, and sending into a room needs it.
            response = await self.matrix.client.sync(
                timeout=0 if not self.ready.is_set() else SYNC_TIMEOUT_MS,
                since=token,
                full_state=not self.ready.is_set(),
            )
            if isinstance(response, SyncError) or not isinstance(response, SyncResponse):
                failures += 1
                self.failing = True
                delay = retry_wait(failures)
                log.warning("sync failed (%s); retrying in %.1f s", response, delay)
                await asyncio.sleep(delay)
                continue
            failures = 0
            self.failing = False
            self.last_sync = time.monotonic()
            self.dispatcher.audiences.observe(response)
            await self.dispatcher.note_receipts(response)
            await self._handle_invites(response)
            fresh = await self.state.store_batch(
                response.next_batch, await self._addressed(response, token), self.lease
            )
            token = response.next_batch
            # Answered messages' ids serve the edit window only.
            window_ms = int(self.settings.current.bot.edit_window_seconds * 1000)
            await self.state.purge_done(now_ms() - window_ms)
            if not self.ready.is_set():
                self.ready.set()
                log.info("ready: synced with %s", self.matrix.client.homeserver)
            if fresh:
                self.workers.wake()
            await self._maintain_keys()

    async def _addressed(self, response: SyncResponse, since: str | None) -> list[PendingEvent]:
        """The messages of the batch that the bot must act on, with what to do (decided
        once, here: the workers and any process taking over carry it out)."""
        pending: list[PendingEvent] = []
        addressed: set[str] = set()
        for room_id, info in response.rooms.join.items():
            await self._note_invite(room_id, [*info.state, *info.timeline.events])
            events = info.timeline.events
            if info.timeline.limited and since and info.timeline.prev_batch:
                gap = await self._gap(room_id, info.timeline.prev_batch, since)
                events = [*gap, *events]
            for event in events:
                if isinstance(event, MegolmEvent):
                    self._report_undecryptable(room_id, event)
                    continue
                candidate = PendingEvent(room_id, event.source)
                feedback = self.dispatcher.feedback
                if feedback is not None and await feedback.wants(event.source):
                    pending.append(candidate)
                    continue
                if (redaction := parse_redaction(event.source)) is not None:
                    await self.dispatcher.follow_redaction(room_id, redaction.redacts)
                    continue
                message, action = await self.dispatcher.route(candidate, addressed)
                if message is None:
                    continue
                await self.dispatcher.observe(message, addressed=not isinstance(action, Ignore))
                if not isinstance(action, Ignore):
                    pending.append(replace(candidate, decision=encode_action(action)))
                    addressed.add(message.event_id)
                else:
                    log.debug("ignoring %s: %s", message.event_id, action.reason)
        return pending

    async def _gap(self, room_id: str, prev_batch: str, since: str) -> list[Event]:
        """The room's messages the sync left out. A failure fails the batch (it is read
        again), but not for ever: one room the homeserver keeps refusing must not stop
        the bot in every room."""
        try:
            gap = await fetch_gap(self.matrix, room_id, prev_batch, since)
        except SEND_ERRORS as exc:
            self._gap_failures += 1
            if self._gap_failures < GAP_ATTEMPTS:
                raise
            log.error("messages sent to %s while the bot was away were not read: %s",
                      room_id, exc)  # fmt: skip
            gap = []
        self._gap_failures = 0
        return gap

    async def _note_invite(self, room_id: str, events: list) -> None:
        """The bot's own invite, as the first sync after joining shows it (the invite
        itself, stripped state, has no time)."""
        for event in events:
            if (
                isinstance(event, RoomMemberEvent)
                and event.state_key == self.matrix.user_id
                and event.membership == "invite"
            ):
                await self.state.note_invited(room_id, event.server_timestamp)

    def _report_undecryptable(self, room_id: str, event: MegolmEvent) -> None:
        if event.session_id in self._undecryptable_sessions:
            return
        if len(self._undecryptable_sessions) >= MAX_REPORTED_SESSIONS:
            self._undecryptable_sessions.clear()  # reported again at worst, never unbounded
        self._undecryptable_sessions.add(event.session_id)
        log.warning(
            "cannot decrypt messages in %s from %s (session %s); asking for the key",
            room_id,
            event.sender,
            event.session_id,
        )
        if self.matrix.client.olm:
            task = asyncio.create_task(self.matrix.client.request_room_key(event))
            self._key_requests.add(task)
            task.add_done_callback(self._key_requests.discard)

    async def _handle_invites(self, response: SyncResponse) -> None:
        allowed = self.settings.current.invites
        for room_id, info in response.rooms.invite.items():
            invite = next(
                (
                    event
                    for event in info.invite_state
                    if isinstance(event, InviteMemberEvent)
                    and event.state_key == self.matrix.user_id
                    and event.membership == "invite"
                ),
                None,
            )
            inviter = UserID(invite.sender) if invite else None
            if decide_invite(inviter, allowed):
                if await self.matrix.join(room_id):
                    direct = bool(invite and invite.content.get("is_direct"))
                    await self.state.record_join(room_id, now_ms(), direct)
                    log.info("joined %s, invited by %s", room_id, inviter)
            else:
                await self.matrix.reject_invite(room_id, strings.INVITE_REFUSED)
                log.info("refused the invite to %s from %s", room_id, inviter)

    async def _maintain_keys(self) -> None:
        client = self.matrix.client
        if not client.olm:
            return
        if client.should_upload_keys:
            await client.keys_upload()
        if client.should_query_keys:
            await client.keys_query()
        if client.should_claim_keys:
            await client.keys_claim(client.get_users_for_key_claiming())
        await client.send_to_device_messages()
