"""The rooms' messages as they come: the conversation feed an answer reads its recent
lines from, and the room's history (core/memory) that later answers search.

History lines go through one queue and one task: a gap of thousands of messages after a
reconnect is a queue of lines, not thousands of tasks. The sync never waits for it: when
the history falls that far behind (its Chroma hangs), lines are left out of it, logged.
Edits and redactions are followed in the history once the lines before them are kept
(`settled`), so that an edit never reaches the history before the line it edits.

Questions to the bot are kept too (marked: summaries read them, history windows do not).
Summaries read the lines the store holds (bot/features/summaries/lines.py), so every line
not kept is noted (`leave_out`): the store then no longer claims the room's lines up to
it (its span, core/history/spans.py). Noted here at once, without waiting for the store,
and written there by the keeper.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from bot.features.answers.feed import Feed, FeedLine
from bot.inbox.events import IncomingMessage
from bot.inbox.links import build_permalink
from bot.inbox.mentions import BotIdentity, strip_reply_fallback
from bot.settings_holder import SettingsHolder
from core.history.spans import after
from core.memory.memory import ConversationMemory
from core.requests import ChatLine

log = logging.getLogger(__name__)
# Messages sent this long before a sync was asked may still come in a later one: a
# homeserver (Synapse under load, federation) stores events a little out of time order.
SEEN_MARGIN_SECONDS = 10.0
# Redactions remembered for reads of the store (far more than a restart's backlog).
MAX_REDACTED = 10_000
# Lines waiting for the history; the sync waits when this many are not kept yet.
HISTORY_QUEUE = 1_000


@dataclass(frozen=True)
class QueuedLine:
    message: IncomingMessage
    addressed: bool
    spoken: bool  # a voice message's transcript


class Conversation:
    def __init__(
        self,
        bot: BotIdentity,
        settings: SettingsHolder,
        memory: ConversationMemory | None,
        not_before_ms: Callable[[str], Awaitable[int]],
        feed: Feed | None = None,
    ) -> None:
        self.bot = bot
        self.settings = settings
        self.memory = memory
        self.not_before_ms = not_before_ms
        self.feed = feed or Feed()
        self._lines: asyncio.Queue[QueuedLine] = asyncio.Queue(HISTORY_QUEUE)
        # Lines queued and lines kept so far: `settled` waits for those queued before it
        # only (a queue's join would also wait for every line that comes meanwhile).
        self._queued = self._kept = 0
        self._redacted: OrderedDict[tuple[str, str], None] = OrderedDict()
        # When the last sync decided was asked (time.time()); None: none yet.
        self._synced_at: float | None = None
        self._progress = asyncio.Condition()
        # Per room, the newest line left out that the store was not told of yet (ms).
        self._left_out: dict[str, int] = {}
        # This process, as the store knows the keeper of lines.
        self._keeper = uuid.uuid4().hex

    async def observe(
        self, message: IncomingMessage, addressed: bool = False, *, spoken: bool = False
    ) -> None:
        """Keep a room's messages as context, leaving out the bot's own messages, commands
        to it, and the quotes that older clients put before a reply (the quoted answer
        would otherwise come back in every later prompt and history search). Messages
        `addressed` to the bot are context for the conversation, not the room's history:
        a history search must not quote an asker's questions back as discussion (they
        are kept, marked, for summaries). A `spoken` line is a voice message's
        transcript. An edit is followed as the inbox's work (FollowEdit)."""
        if message.sender == self.bot.user_id or message.is_edit:
            return
        if message.msgtype not in ("m.text", "m.emote"):
            return
        message = replace(message, body=strip_reply_fallback(message.body).strip())
        if message.body.startswith(self.settings.current.bot.command_prefix):
            return  # a command to the bot is no part of the discussion
        line = ChatLine(message.sender, message.body)
        self.feed.add(
            message.room_id,
            message.thread_root,
            FeedLine(message.event_id, line, message.timestamp_ms / 1000),
        )
        if self.memory is None:
            return
        if message.timestamp_ms < await self.not_before_ms(message.room_id):
            self.leave_out(message.room_id, message.timestamp_ms)
            return
        try:
            self._lines.put_nowait(QueuedLine(message, addressed, spoken))
            self._queued += 1
        except asyncio.QueueFull:
            log.warning("a line of %s is left out of its history: it is behind", message.room_id)
            self.leave_out(message.room_id, message.timestamp_ms)

    def leave_out(self, room_id: str, ts_ms: int) -> None:
        """A line of the room said at `ts_ms` is not kept (or could not be read): the
        store must stop claiming it holds the room's lines up to it."""
        if self.memory is not None:
            self._left_out[room_id] = max(ts_ms, self._left_out.get(room_id, ts_ms))

    def note_redacted(self, room_id: str, event_id: str) -> None:
        """A message was redacted: until the inbox has followed it out of the store, no
        read of the store may return it (a scheduled summary right after a restart)."""
        self._redacted[(room_id, event_id)] = None
        while len(self._redacted) > MAX_REDACTED:
            self._redacted.popitem(last=False)

    def redacted(self, room_id: str) -> frozenset[str]:
        """The room's messages redacted lately (kept for the last MAX_REDACTED)."""
        return frozenset(event for room, event in self._redacted if room == room_id)

    def note_synced(self, asked_at: float) -> None:
        """A sync asked at `asked_at` (time.time()) was decided: every message sent
        before then was seen and queued."""
        self._synced_at = max(asked_at, self._synced_at or asked_at)

    def seen_before(self) -> float | None:
        """Before when every message has been seen by this process's sync (None: it has
        not synced): a homeserver may store a message after one sent a little later, so
        a margin is kept."""
        return None if self._synced_at is None else self._synced_at - SEEN_MARGIN_SECONDS

    def left_out_after(self, room_id: str) -> float | None:
        """Just after the room's newest line left out that the store does not know of
        yet; None when there is none."""
        ts_ms = self._left_out.get(room_id)
        return None if ts_ms is None else after(ts_ms / 1000)

    async def keep_history(self) -> None:
        """Add the queued lines to the rooms' history, until cancelled; the lines still
        queued then are left out."""
        assert self.memory is not None
        await self.memory.start_keeping(self._keeper)
        line: QueuedLine | None = None
        try:
            while True:
                await self._note_left_out()
                line = await self._lines.get()
                try:
                    await self._remember(line)
                finally:
                    async with self._progress:
                        self._kept += 1
                        self._progress.notify_all()
                line = None
        finally:
            await self._stop_keeping(line)

    async def _note_left_out(self) -> None:
        """Tell the store of the lines left out (a failing store is told later)."""
        assert self.memory is not None
        for room_id, ts_ms in list(self._left_out.items()):
            try:
                await self.memory.leave_out(room_id, ts_ms / 1000)
            except Exception as exc:
                # Noted here still: summaries read the room from the homeserver meanwhile.
                log.warning("a line left out of %s is not noted yet: %s", room_id, exc)
                continue
            if self._left_out.get(room_id) == ts_ms:  # none newer came meanwhile
                del self._left_out[room_id]

    async def _stop_keeping(self, current: QueuedLine | None) -> None:
        """Stopped (cancelled): the line being kept (kept or not) and those still queued
        are left out, so that the spans this process leaves are true; otherwise the
        next keeper drops them all (core/history/line_store.py)."""
        assert self.memory is not None
        unkept = [current] if current is not None else []
        while not self._lines.empty():
            unkept.append(self._lines.get_nowait())
        for line in unkept:
            self.leave_out(line.message.room_id, line.message.timestamp_ms)
        async with self._progress:
            self._kept = self._queued
            self._progress.notify_all()
        await self._note_left_out()
        if self._left_out:
            log.warning("lines left out were not noted: rooms are read from the homeserver")
            return
        try:
            await self.memory.stop_keeping(self._keeper)
        except Exception:
            log.exception("the lines' keeper did not stop cleanly")

    def settled(self) -> Awaitable[None]:
        """Wait until the lines queued before this call are in the history."""
        return self._kept_up_to(self._queued)

    async def _kept_up_to(self, queued: int) -> None:
        async with self._progress:
            await self._progress.wait_for(lambda: self._kept >= queued)

    async def _remember(self, line: QueuedLine) -> None:
        assert self.memory is not None
        message = line.message
        try:
            await self.memory.observe(
                message.room_id,
                message.event_id,
                message.sender,
                message.body,
                message.timestamp_ms / 1000,
                build_permalink(message.room_id, message.event_id, message.sender),
                thread_root=message.thread_root or "",
                reply_to=message.reply_to or "",
                mentions=tuple(sorted(message.mentions.user_ids)),
                addressed=line.addressed,
                spoken=line.spoken,
            )
        except Exception:
            # History is a help, never a reason to miss a message: log and go on.
            log.exception("could not add a line of %s to its history", message.room_id)
            self.leave_out(message.room_id, message.timestamp_ms)
