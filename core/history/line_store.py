"""The rooms' lines as summaries read them, and the span the store holds of each room
(core/history/spans.py): the part of the memory store that summaries and catch-ups use.

Only the process that syncs keeps lines (bot/features/answers/conversation.py); it
announces itself with `start_keeping` and leaves with `stop_keeping`. Lines it was given
but had not kept when it stopped are left out first, so a keeper that stopped cleanly
leaves spans that are true. One that did not (killed, or its store failed on the way
out) may have lost lines nobody knows of: the next keeper drops every span, and rooms
start theirs again with their next line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from core.history.spans import SpanChange, after, decide_since
from core.storage.database import Database
from core.storage.store import SqlStore


@dataclass(frozen=True)
class RoomLine:
    """A line of a room's dialog, with what a summary needs of its message."""

    event_id: str
    sender: str
    text: str
    ts: float
    link: str
    thread_root: str = ""
    reply_to: str = ""
    mentions: tuple[str, ...] = ()  # the user ids its m.mentions names
    addressed: bool = False  # said to the bot: a question, never history windows


@dataclass(frozen=True)
class HistoryLine:
    """A line of a room's dialog as its history windows read it (core/history/windows.py)."""

    seq: int
    sender: str
    text: str
    ts: float
    link: str


LINE_COLUMNS = "event_id, sender, text, ts, link, thread_root, reply_to, mentions, addressed"


class SqlRoomLines(SqlStore):
    """The memory store's lines and spans (mixed into SqlMemoryStore)."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        # Rooms known to have a span: spans are only ever dropped all at once (by
        # `start_keeping`), so a kept line needs no second statement in these.
        self._spanned: set[str] = set()
        self._keeping_since = 0.0

    async def room_lines(
        self,
        room: str,
        start: float,
        end: float,
        *,
        thread_root: str | None = None,
        command_prefix: str = "!",
        limit: int = 20_000,
    ) -> list[RoomLine]:
        """The newest `limit` lines of the room said between `start` and `end`, oldest
        first, as a summary reads them: not transcripts of voice messages (not text
        messages), not empty ones or commands (an edit may have made one), and with
        `thread_root` only the thread's (its root included)."""
        thread = " AND (thread_root = ? OR event_id = ?)" if thread_root is not None else ""
        rows = await self.db.fetch(
            f"SELECT {LINE_COLUMNS} FROM history_lines WHERE room = ? AND ts >= ? AND ts <= ?"
            " AND spoken = 0 AND text != '' AND substr(text, 1, ?) != ?"
            f"{thread} ORDER BY ts DESC, seq DESC LIMIT ?",
            room,
            start,
            end,
            len(command_prefix),
            command_prefix,
            *((thread_root, thread_root) if thread_root is not None else ()),
            limit,
        )
        return [
            RoomLine(
                event_id,
                sender,
                text,
                ts,
                link,
                thread,
                reply_to,
                tuple(mentions.split()),
                bool(addressed),
            )
            for event_id, sender, text, ts, link, thread, reply_to, mentions, addressed in reversed(
                rows
            )
        ]

    async def line_span(self, room: str) -> float | None:
        """Since when the store holds every line of the room (None: no claim)."""
        since = await self.db.fetchval("SELECT since_ts FROM line_spans WHERE room = ?", room)
        return None if since is None else float(since)

    async def move_span(self, room: str, change: SpanChange) -> None:
        """Apply a change to the room's span (a line left out, mostly)."""
        async with self.db.transaction() as tx:
            await self._move_span(tx, room, change)

    async def _move_span(self, tx: Database, room: str, change: SpanChange) -> None:
        # Locked on PostgreSQL: retention and a left-out line may move it at once, and
        # the later write must not bring back the earlier, smaller time.
        lock = " FOR UPDATE" if tx.dialect == "postgres" else ""
        row = await tx.fetchrow(f"SELECT since_ts FROM line_spans WHERE room = ?{lock}", room)
        since = None if row is None else float(row[0])
        moved = decide_since(since, change)
        if moved == since:
            return
        if moved is None:
            await tx.execute("DELETE FROM line_spans WHERE room = ?", room)
        else:
            await tx.execute(
                "INSERT INTO line_spans (room, since_ts) VALUES (?, ?)"
                " ON CONFLICT (room) DO UPDATE SET since_ts = excluded.since_ts",
                room,
                moved,
            )

    async def _note_kept(self, room: str, ts: float) -> None:
        """A line was kept: the room's first starts its span (`decide_since`'s Kept rule
        in one statement, on the hot path). After the line itself: a line kept without
        its span is merely not claimed."""
        if room in self._spanned:
            return
        # Never before a keeper that found spans dropped started (see start_keeping).
        since = after(max(ts, self._keeping_since))
        await self.db.execute(
            "INSERT INTO line_spans (room, since_ts) VALUES (?, ?) ON CONFLICT (room) DO NOTHING",
            room,
            since,
        )
        self._spanned.add(room)

    async def start_keeping(self, keeper: str, *, reset: bool = False) -> bool:
        """This process (`keeper`) keeps the lines from now on. Drops every span when the
        previous keeper did not stop cleanly, or with `reset` (lines will not be kept);
        returns whether they were dropped."""
        async with self.db.transaction() as tx:
            previous = await tx.fetchval("SELECT keeper FROM line_keeper WHERE id = 1")
            dropped = reset or bool(previous)
            if dropped:
                await tx.execute("DELETE FROM line_spans")
            await tx.execute(
                "INSERT INTO line_keeper (id, keeper) VALUES (1, ?)"
                " ON CONFLICT (id) DO UPDATE SET keeper = excluded.keeper",
                keeper,
            )
        self._spanned.clear()
        # After an unclean stop, lines the last keeper lost may be older than the first
        # line kept now: no span starts before this moment.
        self._keeping_since = time.time() if dropped else 0.0
        return dropped

    async def stop_keeping(self, keeper: str) -> None:
        """Every line `keeper` was given is kept or left out: its spans are true. Not
        when another keeper took over meanwhile (its own stop will say)."""
        await self.db.execute(
            "UPDATE line_keeper SET keeper = '' WHERE id = 1 AND keeper = ?", keeper
        )
