"""A room's lines for a summary or a catch-up: from the bot's own store for the time it
holds every line of the room (its span, core/history/spans.py), from the homeserver
(history.py) only for the time before that.

The store's lines are the conversation's (bot/features/answers/conversation.py): people's
text messages as they came, edits and redactions followed; questions to the bot (and
what is said in its threads) are kept marked, and left out here as from the homeserver.
Reading 10,000 of them takes milliseconds where paging them back from the homeserver took
seconds. The homeserver's part is read back from about where the span starts
(`messages_token_before`), not from the newest message. Without the room's history (no
knowledge base, or `history = false`) or with the store failing, everything comes from
the homeserver, as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import replace
from typing import Protocol

from bot.features.summaries.history import PEEK, fetch_lines
from bot.inbox.mentions import BotIdentity
from bot.matrix.account import MatrixAccount
from bot.settings_holder import SettingsHolder
from core.history.line_store import RoomLine
from core.history.spans import Sources, decide_sources
from core.memory.memory import ConversationMemory
from core.storage.database import StorageError
from core.summaries.draft import SummaryLine

log = logging.getLogger(__name__)
# How long a read waits for the lines queued before it to be kept; the history behind
# further (its Chroma hangs) means the homeserver is read instead.
SETTLE_SECONDS = 3.0
# Times are whole milliseconds: half of one before a time is before every line said then.
HALF_MS = 0.0005
# A homeserver pages a room in the order it stored its events, not by their times: one
# sent at the same moment as another may be stored after it (Synapse, with messages sent
# at once, by tens of milliseconds). The homeserver's part is read back from this long
# after the span starts, so that such a message is not missed (what is read twice, or
# after the span, is dropped).
TOKEN_MARGIN_MS = 10_000


class HeldLines(Protocol):
    """The lines on their way to the store (the conversation)."""

    def settled(self) -> Awaitable[None]: ...
    def left_out_after(self, room_id: str) -> float | None: ...
    def seen_before(self) -> float | None: ...
    def redacted(self, room_id: str) -> frozenset[str]: ...


def build_summary_lines(
    fetched: list[SummaryLine], stored: list[RoomLine], max_messages: int
) -> list[SummaryLine]:
    """The homeserver's lines and the store's, each once, in time order, the newest
    `max_messages` of them, numbered from 1; not the store's questions to the bot (they
    are no part of the room's discussion, for summaries as for history)."""
    seen: set[str] = set()
    lines: list[SummaryLine] = []
    from_store = [
        SummaryLine(
            0,
            line.sender,
            line.text,
            line.ts,
            line.link,
            line.event_id,
            line.mentions,
            line.reply_to or None,
            line.thread_root or None,
        )
        for line in stored
        if not line.addressed
    ]
    for line in [*fetched, *from_store]:
        if line.event_id not in seen:
            seen.add(line.event_id)
            lines.append(line)
    lines.sort(key=lambda line: line.ts)  # stable: the homeserver's order within a time
    return [
        replace(line, number=number)
        for number, line in enumerate(lines[-max_messages:] if max_messages else [], start=1)
    ]


class LineReader:
    def __init__(
        self,
        matrix: MatrixAccount,
        settings: SettingsHolder,
        memory: ConversationMemory | None = None,
        *,
        bot: BotIdentity | None = None,
    ) -> None:
        self.matrix = matrix
        # Who the bot is (its display name too): messages said to it are left out.
        self.bot = bot
        self.settings = settings
        self.memory = memory
        # Set when the conversation is wired (bot/runtime/wiring.py); without it the store
        # is not read: nobody says whether what it holds is complete.
        self.held: HeldLines | None = None

    async def read(
        self,
        room_id: str,
        start: float,
        end: float,
        *,
        thread_root: str | None = None,
        unreadable: list[float] | None = None,
    ) -> list[SummaryLine]:
        """People's messages between `start` and `end` (timestamps), oldest first, as
        `fetch_lines` reads them: not the bot's, not notices, edits or commands, edited
        ones as they read now, not redacted ones; with `thread_root`, the thread's. The
        times of those the bot could not decrypt go to `unreadable` (the store holds only
        the span after the last of them, so only the homeserver's part has any)."""
        settings = self.settings.current
        prefix, cap = settings.bot.command_prefix, settings.summaries.max_messages
        stored: list[RoomLine] = []
        # What the sync has not shown yet (sent just now, or while it lags) is not in
        # the store yet: that end of the range always comes from the homeserver.
        # A process that has not synced (a standby) has seen nothing: none of the store.
        seen = self.held.seen_before() if self.held is not None else None
        held_end = end if seen is None else min(end, seen)
        try:
            # Nothing of the range seen yet (a sync lagging): all from the homeserver.
            trusted = seen is not None and held_end > start
            since = await self._held_since(room_id) if trusted else None
            sources = decide_sources(start, held_end, since)
            if sources.store is not None:
                assert self.memory is not None
                stored = await self.memory.store.room_lines(
                    room_id,
                    *sources.store,
                    thread_root=thread_root,
                    command_prefix=prefix,
                    limit=cap,
                )
            if stored and self.held is not None:
                gone = self.held.redacted(room_id)  # decided, not yet followed
                stored = [line for line in stored if line.event_id not in gone]
        except StorageError as exc:
            log.warning("the lines of %s are read from the homeserver: %s", room_id, exc)
            sources, stored = decide_sources(start, end, None), []
        fetched: list[SummaryLine] = []
        if sources.store is not None and held_end < end:
            # Newest first: this end is read whole, before the store's part is capped.
            fetched = await fetch_lines(
                self.matrix,
                room_id,
                held_end + HALF_MS,
                end,
                thread_root=thread_root,
                command_prefix=prefix,
                max_messages=cap,
                bot=self.bot,
                unreadable=unreadable,
                first_page=PEEK,
            )
            stored = stored[max(0, len(stored) + len(fetched) - cap) :]
        elif sources.store is None:
            sources = decide_sources(start, end, None)  # all of it from the homeserver
        if sources.homeserver is not None and len(stored) + len(fetched) < cap:
            older = await self._fetch(
                room_id,
                sources,
                thread_root,
                prefix,
                cap - len(stored) - len(fetched),
                unreadable,
            )
            fetched = [*older, *fetched]
        log.debug(
            "lines of %s: %d from the store, %d from the homeserver",
            room_id,
            len(stored),
            len(fetched),
        )
        return build_summary_lines(fetched, stored, cap)

    async def _fetch(
        self,
        room_id: str,
        sources: Sources,
        thread_root: str | None,
        prefix: str,
        cap: int,
        unreadable: list[float] | None = None,
    ) -> list[SummaryLine]:
        """The homeserver's part: read back from where the store's part starts."""
        assert sources.homeserver is not None
        first, last = sources.homeserver
        token = None
        if sources.store is not None:
            last -= HALF_MS  # the store's part starts at `last`
            at = round(sources.store[0] * 1000) + TOKEN_MARGIN_MS
            token = await self.matrix.messages_token_before(room_id, at)
        return await fetch_lines(
            self.matrix,
            room_id,
            first,
            last,
            thread_root=thread_root,
            command_prefix=prefix,
            max_messages=cap,
            from_token=token,
            bot=self.bot,
            unreadable=unreadable,
        )

    async def _held_since(self, room_id: str) -> float | None:
        """Since when the store holds every line of the room, once the lines queued
        before now are in it; None: read none of it."""
        memory, held = self.memory, self.held
        if memory is None or held is None or not memory.holds_lines(room_id):
            return None
        try:
            async with asyncio.timeout(SETTLE_SECONDS):
                await held.settled()
        except TimeoutError:
            log.warning("the history of %s is behind: read from the homeserver", room_id)
            return None
        # Before the store: a line left out leaves the conversation only once the store
        # has it (Conversation._note_left_out).
        left_out = held.left_out_after(room_id)
        since = await memory.store.line_span(room_id)
        if since is None or left_out is None:
            return since
        return max(since, left_out)
