"""The rooms' messages as they come: the conversation feed an answer reads its recent
lines from, and the room's history (core/memory) that later answers search.

History lines go through one queue and one task: a gap of thousands of messages after a
reconnect is a queue of lines, not thousands of tasks. The sync never waits for it: when
the history falls that far behind (its Chroma hangs), lines are left out of it, logged.
Edits and redactions are followed in the history once the lines before them are kept
(`settled`), so that an edit never reaches the history before the line it edits.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace

from bot.features.answers.feed import Feed, FeedLine
from bot.inbox.events import IncomingMessage
from bot.inbox.links import build_permalink
from bot.inbox.mentions import BotIdentity, strip_reply_fallback
from bot.settings_holder import SettingsHolder
from core.memory.memory import ConversationMemory
from core.requests import ChatLine

log = logging.getLogger(__name__)
# Lines waiting for the history; the sync waits when this many are not kept yet.
HISTORY_QUEUE = 1_000


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
        self._lines: asyncio.Queue[IncomingMessage] = asyncio.Queue(HISTORY_QUEUE)
        # Lines queued and lines kept so far: `settled` waits for those queued before it
        # only (a queue's join would also wait for every line that comes meanwhile).
        self._queued = self._kept = 0
        self._progress = asyncio.Condition()

    async def observe(self, message: IncomingMessage, addressed: bool = False) -> None:
        """Keep a room's messages as context, leaving out the bot's own messages, commands
        to it, and the quotes that older clients put before a reply (the quoted answer
        would otherwise come back in every later prompt and history search). Messages
        `addressed` to the bot are context for the conversation, not the room's history:
        a history search must not quote an asker's questions back as discussion. An edit
        is followed as the inbox's work (FollowEdit)."""
        if message.sender == self.bot.user_id or message.is_edit:
            return
        if message.msgtype not in ("m.text", "m.emote"):
            return
        message = replace(message, body=strip_reply_fallback(message.body).strip())
        if message.body.startswith(self.settings.current.bot.command_prefix):
            return  # a command to the bot is no part of the discussion
        line = ChatLine(message.sender, message.body)
        self.feed.add(
            message.room_id, message.thread_root,
            FeedLine(message.event_id, line, message.timestamp_ms / 1000),
        )  # fmt: skip
        if addressed or self.memory is None:
            return
        if message.timestamp_ms >= await self.not_before_ms(message.room_id):
            try:
                self._lines.put_nowait(message)
                self._queued += 1
            except asyncio.QueueFull:
                log.warning(
                    "a line of %s is left out of its history: it is behind", message.room_id
                )

    async def keep_history(self) -> None:
        """Add the queued lines to the rooms' history, until cancelled."""
        while True:
            message = await self._lines.get()
            try:
                await self._remember(message)
            finally:
                async with self._progress:
                    self._kept += 1
                    self._progress.notify_all()

    def settled(self) -> Awaitable[None]:
        """Wait until the lines queued before this call are in the history."""
        return self._kept_up_to(self._queued)

    async def _kept_up_to(self, queued: int) -> None:
        async with self._progress:
            await self._progress.wait_for(lambda: self._kept >= queued)

    async def _remember(self, message: IncomingMessage) -> None:
        assert self.memory is not None
        try:
            await self.memory.observe(
                message.room_id,
                message.event_id,
                message.sender,
                message.body,
                message.timestamp_ms / 1000,
                build_permalink(message.room_id, message.event_id, message.sender),
            )
        except Exception:
            # History is a help, never a reason to miss a message: log and go on.
            log.exception("could not add a line of %s to its history", message.room_id)
