"""The conversation memory of one process, as the bot and the pipeline use it."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable

from core.config import Settings
from core.history.line_store import RoomLine
from core.history.spans import LeftOut
from core.knowledge.search.vectors import KnowledgeUnavailable
from core.ledger.entries import decide_relevant_entries
from core.ledger.store import LedgerStore
from core.memory.history import HistoryIndex
from core.memory.remember import RememberRequest
from core.memory.store import Memory, MemoryStore, Turn
from core.requests import Request
from core.summaries.ledger_entries import LedgerEntry

log = logging.getLogger(__name__)

FLUSH_EVERY_SECONDS = 60


def conversation_key(request: Request) -> str:
    """Follow-ups in a thread continue that thread; in the room, the room's last turn."""
    return request.thread or ""


class ConversationMemory:
    def __init__(
        self,
        store: MemoryStore,
        history: HistoryIndex | None,
        settings: Callable[[], Settings],
        ledger: LedgerStore | None = None,
    ) -> None:
        self.store = store
        self.history = history
        self.settings = settings
        # The rooms' decisions and action items, found by summaries: room knowledge too.
        self.ledger = ledger

    # What the bot sees in rooms.
    async def observe(
        self,
        room: str,
        event_id: str,
        sender: str,
        text: str,
        ts: float,
        link: str,
        *,
        thread_root: str = "",
        reply_to: str = "",
        mentions: tuple[str, ...] = (),
        addressed: bool = False,
        spoken: bool = False,
    ) -> None:
        """Keep a line of a room (a question to the bot when `addressed`: kept for
        summaries, no part of the history windows; a voice message's transcript when
        `spoken`); embed the windows it completes. (Quiet rooms are the flusher's: lines
        that arrive in a burst after a restart are old, yet the room is not quiet.)"""
        if self.history is None:
            return  # nothing is kept, and spans were dropped (`start_keeping`)
        if not self.settings().room(room).history:
            # Kept nowhere, as the room says: the store no longer holds all its lines.
            await self.store.move_span(room, LeftOut(ts))
            return
        line = RoomLine(
            event_id, sender, text, ts, link, thread_root, reply_to, mentions, addressed
        )
        await self.history.add_line(room, line, spoken=spoken)
        if addressed:
            return
        try:
            await self.history.embed_ready_windows(room, idle_too=False)
        except KnowledgeUnavailable:
            pass  # the line is kept; the flusher embeds its window once Chroma is back

    def holds_lines(self, room: str) -> bool:
        """Whether the room's lines are kept here, so that summaries may read them."""
        return self.history is not None and self.settings().room(room).history

    async def leave_out(self, room: str, ts: float) -> None:
        """A line of the room said at `ts` was not kept although it should have been:
        the store no longer claims to hold every line of the room up to it."""
        if self.history is not None:
            await self.store.move_span(room, LeftOut(ts))

    async def start_keeping(self, keeper: str) -> bool:
        """This process keeps the rooms' lines from now on (see line_store.py); without
        a history nothing is kept, and no span may stay. Returns whether spans were
        dropped."""
        return await self.store.start_keeping(keeper, reset=self.history is None)

    async def stop_keeping(self, keeper: str) -> None:
        """Every line given to this process is kept or left out."""
        await self.store.stop_keeping(keeper)

    async def follow_edit(
        self, room: str, event_id: str, sender: str, text: str, edit: str = ""
    ) -> None:
        """A message was edited by its sender (the event `edit`): the history holds its
        new text, and forgets it when that edit is redacted."""
        if self.history is not None:
            await self.history.follow(room, event_id, text, sender, edit)

    async def follow_redaction(self, room: str, event_id: str, ts: float | None = None) -> None:
        """A message (said at `ts`, when known) was redacted: it leaves the history
        windows, and the memories and conversation turns made from it are forgotten."""
        await self.store.forget_event(room, event_id)
        await self.store.forget_turns_of(room, event_id)
        if self.history is not None:
            await self.history.follow(room, event_id, None)
            if ts is not None:
                await self.history.forget_legacy(room, ts)

    async def run_flusher(self) -> None:
        """Move an earlier layout's history over, then embed the last lines of rooms that
        went quiet, once a minute."""
        migrated = False
        while self.history is not None:
            try:
                if migrated:
                    for room in await self.store.rooms_with_lines():
                        await self.history.embed_ready_windows(room)
                else:
                    await self.history.migrate_room_collections()
                    migrated = True
            except KnowledgeUnavailable as exc:
                log.warning("history windows wait for Chroma: %s", exc)
            await asyncio.sleep(FLUSH_EVERY_SECONDS)

    # Turns.
    async def previous_turn(self, request: Request) -> Turn | None:
        return await self.store.turn(request.room, conversation_key(request))

    async def record_turn(self, request: Request, rephrased: str, outcome: str) -> None:
        turn = Turn(request.text, rephrased, outcome, time.time(), request.event or "")
        await self.store.set_turn(request.room, conversation_key(request), turn)
        if request.thread is None and request.event:
            # The answer opens a thread on the question: a follow-up there continues it.
            await self.store.set_turn(request.room, request.event, turn)

    # Explicit memories.
    async def remember(self, request: Request, wish: RememberRequest) -> Memory:
        user = request.sender if wish.scope == "user" else ""
        keep = self.settings().memory.max_memories_per_room
        return await self.store.add_memory(
            request.room, user, wish.fact, request.sender, keep, request.event or ""
        )

    async def memories_for(self, room: str, user: str, since: float = -math.inf) -> list[Memory]:
        """The room's memories and the user's own, kept at `since` or later."""
        return [m for m in await self.store.memories(room, user) if m.created >= since]

    async def ledger_for(
        self, room: str, question: str, since: float, limit: int
    ) -> list[LedgerEntry]:
        """The room's decisions and action items said at `since` or later that speak to
        the question."""
        if self.ledger is None or limit == 0:
            return []
        entries = await self.ledger.entries(room, None, since=since)
        return decide_relevant_entries(question, entries, limit)

    async def forget(self, room: str, ids: list[int]) -> int:
        return await self.store.forget(room, ids)
