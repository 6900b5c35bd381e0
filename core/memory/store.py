"""Durable conversation memory in SQLite: explicit memories, the last turn of each
conversation, and the lines of each room's dialog waiting to be embedded as history.

Everything is keyed by room, and no method reads across rooms: memories never cross rooms.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from core.sqlite_store import SqliteStore

SCHEMA = """
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


@dataclass(frozen=True)
class HistoryLine:
    seq: int
    sender: str
    text: str
    ts: float
    link: str


@dataclass(frozen=True)
class HistoryWindow:
    id: str
    room: str
    first_seq: int
    start_ts: float
    end_ts: float
    text: str
    link: str


class MemoryStore(SqliteStore):
    def __init__(self, path: Path) -> None:
        super().__init__(path, SCHEMA)

    # Explicit memories.
    def add_memory(self, room: str, user: str, text: str, author: str, keep: int) -> Memory:
        """Store a memory; the oldest of the room go beyond `keep`."""
        now = time.time()
        with self._lock, self._db:
            cursor = self._db.execute(
                "INSERT INTO memories (room, user, text, author, created) VALUES (?, ?, ?, ?, ?)",
                (room, user, text, author, now),
            )
            self._db.execute(
                "DELETE FROM memories WHERE room = ? AND id NOT IN "
                "(SELECT id FROM memories WHERE room = ? ORDER BY id DESC LIMIT ?)",
                (room, room, keep),
            )
        return Memory(int(cursor.lastrowid or 0), user, text, author, now)

    def memories(self, room: str, user: str) -> list[Memory]:
        """The room's memories and the user's own in this room, oldest first."""
        rows = self._run(
            "SELECT id, user, text, author, created FROM memories "
            "WHERE room = ? AND user IN ('', ?) ORDER BY id",
            (room, user),
        )
        return [Memory(*row) for row in rows]

    def forget(self, room: str, ids: list[int]) -> int:
        with self._lock, self._db:
            marks = ",".join("?" * len(ids))
            cursor = self._db.execute(
                f"DELETE FROM memories WHERE room = ? AND id IN ({marks})", (room, *ids)
            )
        return cursor.rowcount

    # The last turn of each conversation.
    def set_turn(self, room: str, thread: str, turn: Turn) -> None:
        self._run(
            "INSERT OR REPLACE INTO turns VALUES (?, ?, ?, ?, ?, ?)",
            (room, thread, turn.question, turn.rephrased, turn.outcome, turn.at),
        )

    def turn(self, room: str, thread: str) -> Turn | None:
        rows = self._run(
            "SELECT question, rephrased, outcome, at FROM turns WHERE room = ? AND thread = ?",
            (room, thread),
        )
        return Turn(*rows[0]) if rows else None

    # The rooms' dialog, and the windows of it that were embedded.
    def add_line(self, room: str, event_id: str, sender: str, text: str, ts: float, link: str):
        self._run(
            "INSERT OR IGNORE INTO history_lines (room, event_id, sender, text, ts, link) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (room, event_id, sender, text, ts, link),
        )

    def rooms_with_lines(self) -> list[str]:
        return [row[0] for row in self._run("SELECT DISTINCT room FROM history_lines")]

    def lines_from(self, room: str, first_seq: int) -> list[HistoryLine]:
        rows = self._run(
            "SELECT seq, sender, text, ts, link FROM history_lines "
            "WHERE room = ? AND seq >= ? ORDER BY seq",
            (room, first_seq),
        )
        return [HistoryLine(*row) for row in rows]

    def window_mark(self, room: str) -> tuple[int, int]:
        """The first line of the room's next window, and how many lines from there on
        are already in a window (the overlap)."""
        rows = self._run("SELECT next_start, carried FROM history_marks WHERE room = ?", (room,))
        return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)

    def add_windows(
        self, room: str, windows: list[HistoryWindow], next_start: int, carried: int
    ) -> None:
        """Record embedded windows and move the room's mark, in one transaction."""
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO history_windows VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(w.id, w.room, w.first_seq, w.start_ts, w.end_ts, w.text, w.link)
                 for w in windows],
            )  # fmt: skip
            self._db.execute(
                "INSERT OR REPLACE INTO history_marks VALUES (?, ?, ?)", (room, next_start, carried)
            )
            self._db.execute(
                "DELETE FROM history_lines WHERE room = ? AND seq < ?", (room, next_start)
            )

    def has_windows(self, room: str) -> bool:
        return bool(self._run("SELECT 1 FROM history_windows WHERE room = ? LIMIT 1", (room,)))

    def windows(self, room: str, ids: list[str]) -> dict[str, HistoryWindow]:
        marks = ",".join("?" * len(ids))
        rows = self._run(
            f"SELECT * FROM history_windows WHERE room = ? AND id IN ({marks})", (room, *ids)
        )
        return {row[0]: HistoryWindow(*row) for row in rows}
