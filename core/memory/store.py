"""Durable conversation memory: explicit memories, the last turn of each
conversation, and the lines of each room's dialog waiting to be embedded as history.

Everything is keyed by room, and no method reads across rooms: memories never cross rooms.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from core.history.line_store import HistoryLine, RoomLine, SqlRoomLines
from core.history.spans import Purged, SpanChange
from core.storage.upgrades import Upgrade, UpgradeTable

# The schema of the release before versioned migrations, adopted in place as version 1.
V1_SQLITE = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY, room TEXT NOT NULL, user TEXT NOT NULL,
    text TEXT NOT NULL, author TEXT NOT NULL, created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_of_room ON memories (room, id);
CREATE TABLE IF NOT EXISTS turns (
    room TEXT NOT NULL, thread TEXT NOT NULL, question TEXT NOT NULL,
    rephrased TEXT NOT NULL, outcome TEXT NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (room, thread)
);
CREATE TABLE IF NOT EXISTS history_lines (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, room TEXT NOT NULL, event_id TEXT NOT NULL UNIQUE,
    sender TEXT NOT NULL, text TEXT NOT NULL, ts REAL NOT NULL, link TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS history_of_room ON history_lines (room, seq);
CREATE TABLE IF NOT EXISTS history_windows (
    id TEXT PRIMARY KEY, room TEXT NOT NULL, first_seq INTEGER NOT NULL,
    start_ts REAL NOT NULL, end_ts REAL NOT NULL, text TEXT NOT NULL, link TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS windows_of_room ON history_windows (room, first_seq);
CREATE TABLE IF NOT EXISTS history_marks (
    room TEXT PRIMARY KEY, next_start INTEGER NOT NULL, carried INTEGER NOT NULL
);
"""

V1_POSTGRES = """
CREATE TABLE IF NOT EXISTS memories (
    id BIGSERIAL PRIMARY KEY, room TEXT NOT NULL, "user" TEXT NOT NULL,
    text TEXT NOT NULL, author TEXT NOT NULL, created DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_of_room ON memories (room, id);
CREATE TABLE IF NOT EXISTS turns (
    room TEXT NOT NULL, thread TEXT NOT NULL, question TEXT NOT NULL,
    rephrased TEXT NOT NULL, outcome TEXT NOT NULL, at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (room, thread)
);
CREATE TABLE IF NOT EXISTS history_lines (
    seq BIGSERIAL PRIMARY KEY, room TEXT NOT NULL, event_id TEXT NOT NULL UNIQUE,
    sender TEXT NOT NULL, text TEXT NOT NULL, ts DOUBLE PRECISION NOT NULL, link TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS history_of_room ON history_lines (room, seq);
CREATE TABLE IF NOT EXISTS history_windows (
    id TEXT PRIMARY KEY, room TEXT NOT NULL, first_seq INTEGER NOT NULL,
    start_ts DOUBLE PRECISION NOT NULL, end_ts DOUBLE PRECISION NOT NULL,
    text TEXT NOT NULL, link TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS windows_of_room ON history_windows (room, first_seq);
CREATE TABLE IF NOT EXISTS history_marks (
    room TEXT PRIMARY KEY, next_start INTEGER NOT NULL, carried INTEGER NOT NULL
);
"""

# History that follows edits and redactions: a window knows its last line, lines stay
# after their windows are embedded (so a window can be rebuilt without one of them), and
# a memory knows the message it was made from. Windows of earlier releases have no last
# line (-1) and their lines are gone: they are not rebuilt.
V2 = """
ALTER TABLE history_windows ADD COLUMN last_seq BIGINT NOT NULL DEFAULT -1;
ALTER TABLE memories ADD COLUMN event_id TEXT NOT NULL DEFAULT '';
ALTER TABLE history_lines ADD COLUMN edited_by TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS memories_of_event ON memories (room, event_id);
CREATE INDEX IF NOT EXISTS history_line_events ON history_lines (room, event_id);
"""

# A turn knows the message its question came from, so that its redaction removes it.
V3 = """
ALTER TABLE turns ADD COLUMN event_id TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS turns_of_event ON turns (room, event_id);
"""

# Lines that summaries read (core/history/line_store.py): what a summary needs of each
# message, questions to the bot and transcripts kept too (marked: neither is history nor,
# for transcripts, a text message), and the span of each room the store holds. Lines kept
# before have no span: rooms start theirs with their next line.
V4 = """
ALTER TABLE history_lines ADD COLUMN thread_root TEXT NOT NULL DEFAULT '';
ALTER TABLE history_lines ADD COLUMN reply_to TEXT NOT NULL DEFAULT '';
ALTER TABLE history_lines ADD COLUMN mentions TEXT NOT NULL DEFAULT '';
ALTER TABLE history_lines ADD COLUMN addressed {flag} NOT NULL DEFAULT 0;
ALTER TABLE history_lines ADD COLUMN spoken {flag} NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS history_by_time ON history_lines (room, ts);
CREATE TABLE IF NOT EXISTS line_spans (room TEXT PRIMARY KEY, since_ts {real} NOT NULL);
CREATE TABLE IF NOT EXISTS line_keeper (id INTEGER PRIMARY KEY, keeper TEXT NOT NULL);
"""

UPGRADES = UpgradeTable(
    "memory",
    [
        Upgrade("memories, turns, history lines and windows", V1_SQLITE, V1_POSTGRES),
        Upgrade("history and memories that follow edits and redactions", V2, V2),
        Upgrade("turns that follow redactions", V3, V3),
        Upgrade(
            "lines that summaries read, and the span of each room held",
            V4.format(flag="INTEGER", real="REAL"),
            V4.format(flag="SMALLINT", real="DOUBLE PRECISION"),
        ),
    ],
)
# Lines said to the bot are no part of the room's dialog: never in a history window.
DIALOG = "addressed = 0"
WINDOW_COLUMNS = "id, room, first_seq, start_ts, end_ts, text, link, last_seq"


@dataclass(frozen=True)
class Memory:
    id: int
    user: str  # "" for a memory of the whole room
    text: str
    author: str
    created: float


@dataclass(frozen=True)
class Turn:
    """The last question of a conversation (a room, or a thread) and what became of it."""

    question: str
    rephrased: str
    outcome: str  # "answered", "toxic", "out_of_scope", "comment", ...
    at: float
    # The message the question came from ("": not known).
    event_id: str = ""


@dataclass(frozen=True)
class HistoryWindow:
    id: str
    room: str
    first_seq: int
    start_ts: float
    end_ts: float
    text: str
    link: str
    last_seq: int = -1


class MemoryStore(Protocol):
    async def add_memory(
        self, room: str, user: str, text: str, author: str, keep: int, event_id: str = ""
    ) -> Memory: ...
    async def memories(self, room: str, user: str) -> list[Memory]: ...
    async def forget(self, room: str, ids: list[int]) -> int: ...
    async def forget_event(self, room: str, event_id: str) -> int: ...
    async def change_line(
        self, room: str, event_id: str, text: str | None, sender: str = "", edit: str = ""
    ) -> int | None: ...
    async def windows_with(self, room: str, seq: int) -> list[HistoryWindow]: ...
    async def lines_between(self, room: str, first: int, last: int) -> list[HistoryLine]: ...
    async def put_window(self, window: HistoryWindow) -> None: ...
    async def purge_before(self, room: str, cutoff: float) -> list[str]: ...
    async def drop_legacy_windows(self, room: str, ts: float) -> list[str]: ...
    async def drop_window(self, room: str, window_id: str) -> None: ...
    async def set_turn(self, room: str, thread: str, turn: Turn) -> None: ...
    async def turn(self, room: str, thread: str) -> Turn | None: ...
    async def forget_turns_of(self, room: str, event_id: str) -> int: ...
    async def purge_turns_before(self, room: str, cutoff: float) -> int: ...
    async def erase_freed(self) -> None: ...
    async def add_line(self, room: str, line: RoomLine, *, spoken: bool = False) -> None: ...
    async def room_lines(
        self,
        room: str,
        start: float,
        end: float,
        *,
        thread_root: str | None = None,
        command_prefix: str = "!",
        limit: int = 20_000,
    ) -> list[RoomLine]: ...
    async def line_span(self, room: str) -> float | None: ...
    async def move_span(self, room: str, change: SpanChange) -> None: ...
    async def start_keeping(self, keeper: str, *, reset: bool = False) -> bool: ...
    async def stop_keeping(self, keeper: str) -> None: ...
    async def rooms_with_lines(self) -> list[str]: ...
    async def lines_from(self, room: str, first_seq: int) -> list[HistoryLine]: ...
    async def window_mark(self, room: str) -> tuple[int, int]: ...
    async def add_windows(
        self, room: str, windows: list[HistoryWindow], next_start: int, carried: int
    ) -> None: ...
    async def has_windows(self, room: str) -> bool: ...
    async def rooms_with_windows(self) -> list[str]: ...
    async def windows(self, room: str, ids: list[str]) -> dict[str, HistoryWindow]: ...


class SqlMemoryStore(SqlRoomLines):
    """The memory store over either backend. `"user"` is quoted: PostgreSQL reserves it.
    Its lines as summaries read them, and their spans: SqlRoomLines."""

    upgrades = UPGRADES

    # Explicit memories.
    async def add_memory(
        self, room: str, user: str, text: str, author: str, keep: int, event_id: str = ""
    ) -> Memory:
        """Store a memory (made from the message `event_id`); the oldest of the room go
        beyond `keep`."""
        now = time.time()
        async with self.db.transaction() as tx:
            memory_id = await tx.fetchval(
                'INSERT INTO memories (room, "user", text, author, created, event_id)'
                " VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                room,
                user,
                text,
                author,
                now,
                event_id,
            )
            await tx.execute(
                "DELETE FROM memories WHERE room = ? AND id NOT IN "
                "(SELECT id FROM memories WHERE room = ? ORDER BY id DESC LIMIT ?)",
                room,
                room,
                keep,
            )
        return Memory(int(memory_id), user, text, author, now)

    async def memories(self, room: str, user: str) -> list[Memory]:
        """The room's memories and the user's own in this room, oldest first."""
        rows = await self.db.fetch(
            'SELECT id, "user", text, author, created FROM memories '
            "WHERE room = ? AND \"user\" IN ('', ?) ORDER BY id",
            room,
            user,
        )
        return [Memory(*row) for row in rows]

    async def forget(self, room: str, ids: list[int]) -> int:
        if not ids:
            return 0  # PostgreSQL refuses an empty `IN ()`
        marks = ",".join("?" * len(ids))
        return await self.db.execute(
            f"DELETE FROM memories WHERE room = ? AND id IN ({marks})", room, *ids
        )

    async def forget_event(self, room: str, event_id: str) -> int:
        """Forget the memories made from a message (it was redacted)."""
        return await self.db.execute(
            "DELETE FROM memories WHERE room = ? AND event_id = ?", room, event_id
        )

    # The last turn of each conversation.
    async def set_turn(self, room: str, thread: str, turn: Turn) -> None:
        await self.db.execute(
            "INSERT INTO turns (room, thread, question, rephrased, outcome, at, event_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (room, thread) DO UPDATE"
            " SET question = excluded.question, rephrased = excluded.rephrased,"
            " outcome = excluded.outcome, at = excluded.at, event_id = excluded.event_id",
            room,
            thread,
            turn.question,
            turn.rephrased,
            turn.outcome,
            turn.at,
            turn.event_id,
        )

    async def turn(self, room: str, thread: str) -> Turn | None:
        row = await self.db.fetchrow(
            "SELECT question, rephrased, outcome, at, event_id FROM turns"
            " WHERE room = ? AND thread = ?",
            room,
            thread,
        )
        return Turn(*row) if row else None

    async def forget_turns_of(self, room: str, event_id: str) -> int:
        """Forget the turns whose question came from a message (it was redacted); a turn
        of an earlier release, not knowing its message, goes with its thread's root."""
        return await self.db.execute(
            "DELETE FROM turns WHERE room = ? AND (event_id = ? OR (event_id = '' AND thread = ?))",
            room,
            event_id,
            event_id,
        )

    async def purge_turns_before(self, room: str, cutoff: float) -> int:
        """The room's retention: turns asked before `cutoff` go."""
        return await self.db.execute("DELETE FROM turns WHERE room = ? AND at < ?", room, cutoff)

    # The rooms' dialog, and the windows of it that were embedded.
    async def add_line(self, room: str, line: RoomLine, *, spoken: bool = False) -> None:
        """Keep a line (a question to the bot when `line.addressed`, a voice message's
        transcript when `spoken`); the room's first starts its span."""
        await self.db.execute(
            "INSERT INTO history_lines (room, event_id, sender, text, ts, link, thread_root,"
            " reply_to, mentions, addressed, spoken) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            room,
            line.event_id,
            line.sender,
            line.text,
            line.ts,
            line.link,
            line.thread_root,
            line.reply_to,
            " ".join(line.mentions),
            int(line.addressed),
            int(spoken),
        )
        if not spoken:  # a transcript is kept late, out of time order: it starts nothing
            await self._note_kept(room, line.ts)

    async def rooms_with_lines(self) -> list[str]:
        """Rooms with lines not yet in a window."""
        rows = await self.db.fetch(
            "SELECT DISTINCT l.room FROM history_lines l"
            " LEFT JOIN history_marks m ON m.room = l.room"
            f" WHERE l.seq >= COALESCE(m.next_start, 0) AND l.{DIALOG}"
        )
        return [row[0] for row in rows]

    async def change_line(
        self, room: str, event_id: str, text: str | None, sender: str = "", edit: str = ""
    ) -> int | None:
        """A line's new text (the `edit` event, only by its `sender`), or None to drop it
        (a redaction of the message, or of the edit that gave it its text); returns its
        place in the room's dialog, or None when it is none (the bot does not hold it, or
        it was said to the bot: in no window)."""
        row = await self.db.fetchrow(
            "SELECT seq, sender, addressed FROM history_lines WHERE room = ?"
            " AND (event_id = ? OR (edited_by != '' AND edited_by = ?))",
            room,
            event_id,
            event_id,
        )
        if row is None or (text is not None and row[1] != sender):
            return None
        seq = row[0]
        if text is None:
            await self.db.execute("DELETE FROM history_lines WHERE seq = ?", seq)
        else:
            await self.db.execute(
                "UPDATE history_lines SET text = ?, edited_by = ? WHERE seq = ?", text, edit, seq
            )
        return None if row[2] else int(seq)

    async def windows_with(self, room: str, seq: int) -> list[HistoryWindow]:
        rows = await self.db.fetch(
            f"SELECT {WINDOW_COLUMNS} FROM history_windows"
            " WHERE room = ? AND first_seq <= ? AND last_seq >= ?",
            room,
            seq,
            seq,
        )
        return [HistoryWindow(*row) for row in rows]

    async def lines_between(self, room: str, first: int, last: int) -> list[HistoryLine]:
        rows = await self.db.fetch(
            "SELECT seq, sender, text, ts, link FROM history_lines "
            f"WHERE room = ? AND seq >= ? AND seq <= ? AND {DIALOG} ORDER BY seq",
            room,
            first,
            last,
        )
        return [HistoryLine(*row) for row in rows]

    async def put_window(self, window: HistoryWindow) -> None:
        await self.db.execute(
            "UPDATE history_windows SET start_ts = ?, end_ts = ?, text = ?, link = ?"
            " WHERE room = ? AND id = ?",
            window.start_ts,
            window.end_ts,
            window.text,
            window.link,
            window.room,
            window.id,
        )

    async def purge_before(self, room: str, cutoff: float) -> list[str]:
        """Drop the room's lines said before `cutoff` and the windows that end before it
        (the room's retention), its span moved to the cutoff; returns the windows' ids."""
        async with self.db.transaction() as tx:
            rows = await tx.fetch(
                "SELECT id FROM history_windows WHERE room = ? AND end_ts < ?", room, cutoff
            )
            await tx.execute(
                "DELETE FROM history_windows WHERE room = ? AND end_ts < ?", room, cutoff
            )
            await tx.execute("DELETE FROM history_lines WHERE room = ? AND ts < ?", room, cutoff)
            await self._move_span(tx, room, Purged(cutoff))
        return [row[0] for row in rows]

    async def drop_legacy_windows(self, room: str, ts: float) -> list[str]:
        """Drop the room's windows from before lines were kept (they cannot be rebuilt)
        that span the time `ts`; returns their ids."""
        condition = "room = ? AND last_seq = -1 AND start_ts <= ? AND end_ts >= ?"
        async with self.db.transaction() as tx:
            rows = await tx.fetch(f"SELECT id FROM history_windows WHERE {condition}", room, ts, ts)
            await tx.execute(f"DELETE FROM history_windows WHERE {condition}", room, ts, ts)
        return [row[0] for row in rows]

    async def drop_window(self, room: str, window_id: str) -> None:
        await self.db.execute(
            "DELETE FROM history_windows WHERE room = ? AND id = ?", room, window_id
        )

    async def lines_from(self, room: str, first_seq: int) -> list[HistoryLine]:
        rows = await self.db.fetch(
            "SELECT seq, sender, text, ts, link FROM history_lines "
            f"WHERE room = ? AND seq >= ? AND {DIALOG} ORDER BY seq",
            room,
            first_seq,
        )
        return [HistoryLine(*row) for row in rows]

    async def window_mark(self, room: str) -> tuple[int, int]:
        """The first line of the room's next window, and how many lines from there on
        are already in a window (the overlap)."""
        row = await self.db.fetchrow(
            "SELECT next_start, carried FROM history_marks WHERE room = ?", room
        )
        return (int(row[0]), int(row[1])) if row else (0, 0)

    async def add_windows(
        self, room: str, windows: list[HistoryWindow], next_start: int, carried: int
    ) -> None:
        """Record embedded windows and move the room's mark, in one transaction."""
        async with self.db.transaction() as tx:
            await tx.executemany(
                f"INSERT INTO history_windows ({WINDOW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET room = excluded.room,"
                " first_seq = excluded.first_seq, start_ts = excluded.start_ts,"
                " end_ts = excluded.end_ts, text = excluded.text, link = excluded.link,"
                " last_seq = excluded.last_seq",
                [
                    (w.id, w.room, w.first_seq, w.start_ts, w.end_ts, w.text, w.link, w.last_seq)
                    for w in windows
                ],
            )
            await tx.execute(
                "INSERT INTO history_marks VALUES (?, ?, ?) ON CONFLICT (room)"
                " DO UPDATE SET next_start = excluded.next_start, carried = excluded.carried",
                room,
                next_start,
                carried,
            )

    async def has_windows(self, room: str) -> bool:
        query = "SELECT 1 FROM history_windows WHERE room = ? LIMIT 1"
        return await self.db.fetchrow(query, room) is not None

    async def rooms_with_windows(self) -> list[str]:
        rows = await self.db.fetch("SELECT DISTINCT room FROM history_windows")
        return [row[0] for row in rows]

    async def windows(self, room: str, ids: list[str]) -> dict[str, HistoryWindow]:
        if not ids:
            return {}  # PostgreSQL refuses an empty `IN ()`
        marks = ",".join("?" * len(ids))
        rows = await self.db.fetch(
            f"SELECT {WINDOW_COLUMNS} FROM history_windows WHERE room = ? AND id IN ({marks})",
            room,
            *ids,
        )
        return {row[0]: HistoryWindow(*row) for row in rows}
