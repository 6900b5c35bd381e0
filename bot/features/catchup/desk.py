"""`!catchup`: what the asker missed in the rooms they share with the bot, since they
last read each one (their read receipt) or since a time in words, sent to their direct
chat with the bot: only the asker reads it, so it holds only what the asker may read."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.features.catchup.digests import Digest, DigestStore, describe_pause
from bot.features.catchup.receipts import ReceiptStore
from bot.features.feature import Feature
from bot.features.summaries.lines import LineReader
from bot.inbox.audience import Audiences
from bot.inbox.decisions import Catchup, ScheduleDigest
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.links import build_room_link
from bot.inbox.render import build_room_notice
from bot.inbox.reply import ReplyWriter
from bot.matrix.account import MatrixAccount, build_shown_names
from bot.matrix.types import InviteRefused, MatrixError, SyncBatch
from bot.settings_holder import SettingsHolder
from core import strings
from core.catchup.catchup import Reader, RoomCatchup, build_catchup_markdown, build_room_catchup
from core.catchup.digest_schedule import decide_next_run, parse_digest_schedule
from core.i18n.dates import format_when
from core.i18n.language import decided_language, speaking
from core.ids import UserID
from core.llm.client import LlmError
from core.rights.readers import decide_knowledge_since, decide_open
from core.storage.database import StorageError
from core.summaries.summarizer import Summarizer
from core.timerange import TimeExpressionFinder

log = logging.getLogger(__name__)
ROOM_WAIT_STEPS = 20


class CatchupDesk(Feature):
    def __init__(
        self,
        matrix: MatrixAccount,
        receipts: ReceiptStore,
        digests: DigestStore,
        summarizer: Summarizer,
        settings: SettingsHolder,
        audiences: Audiences,
        times: TimeExpressionFinder,
        lines: LineReader | None = None,
    ) -> None:
        self.matrix = matrix
        # The rooms' lines: the store's and the homeserver's (or only the homeserver's).
        self.lines = lines or LineReader(matrix, settings)
        self.receipts = receipts
        self.digests = digests
        self.summarizer = summarizer
        self.settings = settings
        self.audiences = audiences
        self.times = times

    async def keep_receipts(self, batch: SyncBatch) -> None:
        """Where people last read each room (a help: a store that fails loses these
        receipts, not the sync)."""
        try:
            await self.receipts.store_receipts(batch.receipts)
        except StorageError as exc:
            log.warning("read receipts were not kept: %s", exc)

    def register(self, dispatcher: Dispatcher) -> None:
        """The command this feature runs: `!catchup` (it asks the model)."""
        dispatcher.on_command(Catchup, self.command, asks_model=True)
        dispatcher.on_command(ScheduleDigest, self.schedule)

    async def schedule(self, reply: ReplyWriter, action: ScheduleDigest) -> None:
        """!catchup every …|off: the sender's daily digest."""
        settings = self.settings.current
        message = reply.message
        timezone = settings.room(message.room_id).timezone
        prefix = settings.bot.command_prefix
        text = await self._schedule(message.sender, action.request.strip(), timezone, prefix)
        await reply.finish(text)

    async def command(self, reply: ReplyWriter, action: Catchup) -> None:
        """!catchup [since …]: what the sender missed, in a direct chat."""
        is_direct = action.direct
        settings = self.settings.current
        message = reply.message
        timezone = settings.room(message.room_id).timezone
        args, prefix = action.request.strip(), settings.bot.command_prefix
        since: float | None = None
        if args:
            now = datetime.now(ZoneInfo(timezone))
            found = await asyncio.to_thread(self.times.read_range, args, now)
            if found is None:
                await reply.finish(
                    strings.CATCHUP_RANGE_UNREADABLE.format(args=args, prefix=prefix)
                )
                return
            since = found.as_timestamps()[0]
        rooms = await self.build(message.sender, since)
        heading = strings.CATCHUP_HEADING.format(since=args or strings.CATCHUP_SINCE_READ)
        text = build_catchup_markdown(heading, rooms)
        sealed = self._covers_encrypted(rooms)
        if is_direct and self._private_with(message.room_id, message.sender, sealed):
            await reply.finish(text)
            return
        try:
            direct = await self._direct_room(message.sender, sealed)
        except InviteRefused as exc:
            # Said where they asked, without the catch-up itself (others may read it).
            reason = describe_pause("invites_blocked" if exc.blocked else "invite_refused")
            notice = strings.CATCHUP_NOT_DELIVERED.format(reason=reason)
            if await self.digests.digest_of(message.sender) is not None:
                notice += " " + strings.DIGEST_PAUSED_NOTE
            await reply.finish(notice)
            return
        resumed = await self.digests.resume_digest(message.sender)
        if direct == message.room_id:  # asked in the chat it goes to: only the catch-up
            await reply.finish(text + ("\n\n" + strings.DIGEST_RESUMED if resumed else ""))
            return
        await self.matrix.send(direct, build_room_notice(text), sealed=sealed)
        sent = strings.CATCHUP_SENT_ENCRYPTED if sealed else strings.CATCHUP_SENT
        link = build_room_link(direct, message.sender, strings.OPEN_LINK)
        resumed_note = " " + strings.DIGEST_RESUMED if resumed else ""
        await reply.finish(sent.format(link=link) + resumed_note)

    async def _schedule(self, user: UserID, args: str, timezone: str, prefix: str) -> str:
        if args.lower() == "off":
            removed = await self.digests.remove_digest(user)
            return strings.DIGEST_OFF if removed else strings.DIGEST_NONE
        schedule = parse_digest_schedule(args)
        if schedule is None:
            return strings.DIGEST_UNREADABLE.format(args=args, prefix=prefix)
        now = time.time()
        next_run = decide_next_run(schedule, now, timezone)
        await self.digests.set_digest(
            Digest(user, schedule, timezone, next_run, now, decided_language())
        )
        return strings.DIGEST_SET.format(
            schedule=schedule.describe(), timezone=timezone, prefix=prefix
        )

    async def deliver(self, digest: Digest) -> None:
        """A scheduled catch-up: since the previous one (or where the person last read
        each room, when later), sent to their direct chat when something is new."""
        with speaking(digest.language):
            await self._deliver(digest)

    async def _deliver(self, digest: Digest) -> None:
        rooms = await self.build(UserID(digest.user_id), None, not_before=digest.last_run)
        if all(room.empty for room in rooms):
            return
        when = datetime.fromtimestamp(digest.next_run, ZoneInfo(digest.timezone))
        heading = strings.DIGEST_HEADING.format(when=format_when(when, "weekday"))
        sealed = self._covers_encrypted(rooms)
        direct = await self._direct_room(UserID(digest.user_id), sealed)
        text = build_catchup_markdown(heading, rooms)
        # One transaction per person and scheduled time: a run tried again (its send
        # abandoned at the lease's end, a restart before it was recorded) gives the
        # homeserver's first event instead of a second digest.
        run = hashlib.sha256(f"{digest.user_id}\0{digest.next_run}".encode()).hexdigest()
        await self.matrix.send(
            direct, build_room_notice(text), sealed=sealed, txn_id=f"digest-{run[:32]}"
        )

    async def build(
        self, user: UserID, since: float | None, *, not_before: float = 0.0
    ) -> list[RoomCatchup]:
        """The catch-up of every room the user is in with the bot: from `since`, or
        where they last read each room; never before they could read it, nor before
        `not_before`."""
        now = time.time()
        default_start = now - self.settings.current.summaries.default_hours * 3600
        rooms: list[RoomCatchup] = []
        for room_id, room in list(self.matrix.rooms().items()):
            if room.members.get(user) != "join":
                continue
            readable = decide_knowledge_since(
                self.audiences.members(room_id), frozenset({user}), own_room=True
            )
            if readable is None:
                continue
            start = since if since is not None else await self._last_read(room_id, user)
            start = max(start if start is not None else default_start, readable, not_before)
            rooms.append(
                await self._room(room_id, self.matrix.room_name(room_id), user, start, now)
            )
        return rooms

    async def _room(
        self, room_id: str, name: str, user: UserID, start: float, end: float
    ) -> RoomCatchup:
        settings = self.settings.current
        unreadable: list[float] = []
        lines = await self.lines.read(room_id, start, end, unreadable=unreadable)
        room = self.matrix.room(room_id)
        own_name = self.matrix.member_name(room_id, user)
        reader = Reader(
            user,
            names=tuple(n for n in (own_name, user.split(":")[0].lstrip("@")) if n),
            own_events=frozenset(line.event_id for line in lines if line.sender == user),
        )
        catchup = build_room_catchup(name, lines, reader)
        catchup.encrypted = room is None or room.encrypted
        catchup.unreadable = len(unreadable)
        catchup.names = build_shown_names(self.matrix, room_id, (line.sender for line in lines))
        if self.summarizer.llm is not None and catchup.rest:
            try:
                result = await self.summarizer.summarize(
                    catchup.rest,
                    "",
                    timezone=settings.room(room_id).timezone,
                    part_tokens=settings.summaries.part_tokens,
                )
                catchup.tldr = result.tldr
            except LlmError as exc:
                # The rest is then a couple of its messages, as without a model.
                log.warning("a catch-up goes without the model's summary: %s", exc)
        return catchup

    async def _last_read(self, room_id: str, user: str) -> float | None:
        """Just after the message the user last marked read was sent (or, when the
        homeserver cannot say, when they marked it): where their catch-up begins."""
        receipt = await self.receipts.last_read(room_id, user)
        if receipt is None:
            return None
        event = await self.matrix.fetch_event(room_id, receipt.event_id)
        sent = event.get("origin_server_ts") if event else None
        return (sent + 1) / 1000 if isinstance(sent, int) else receipt.ts_ms / 1000

    def _covers_encrypted(self, rooms: list[RoomCatchup]) -> bool:
        """Whether the catch-up holds text of an encrypted room (it goes only to an
        encrypted chat, where the homeserver cannot read it)."""
        return any(not room.empty and room.encrypted for room in rooms)

    def _private_with(self, room_id: str, user: UserID, sealed: bool = False) -> bool:
        """Whether only `user` (besides the bot) may read what is posted in the room,
        now and later: no other member or invitee, and not open to newcomers who could
        scroll back; and, when `sealed`, encrypted. The admin room never is: it is where
        config errors go, whoever is in it now."""
        if room_id == self.settings.current.bot.admin_room:
            return False
        members = self.audiences.members(room_id)
        others = set(members.joined) | set(members.invited)
        encrypted_enough = members.encrypted or not sealed
        return others <= {user} and not decide_open(members) and encrypted_enough

    async def _direct_room(self, user: UserID, sealed: bool) -> str:
        """The private chat with the user (encrypted when `sealed`): the one the bot made
        for them before (even when they left it: one chat, never one per digest), another
        private room of just the two of them, or a new one, encrypted whenever the bot
        has encryption on."""
        kept = await self.receipts.direct_room(user)
        rooms = self.matrix.rooms()
        if kept is not None and kept in rooms and self._private_with(kept, user, sealed):
            return kept
        for room_id, room in list(rooms.items()):
            if user in room.members and self._private_with(room_id, user, sealed):
                await self.receipts.set_direct_room(user, room_id)
                return room_id
        if sealed and not self.matrix.encryption_on:
            raise MatrixError("a catch-up of encrypted rooms needs matrix.encryption on")
        response = await self.matrix.create_room(invite=[user], direct=True)
        await self.receipts.set_direct_room(user, response)
        # Sending needs the room's state with the invite in it: in an encrypted room the
        # message's key is shared with the members known then, and the invitee must be one.
        for _ in range(ROOM_WAIT_STEPS):
            made = self.matrix.room(response)
            if made is not None and user in made.members:
                break
            await asyncio.sleep(0.5)
        log.info("made a direct chat for a catch-up")
        return response
