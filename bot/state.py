"""The bot's durable memory of Matrix: sync position, messages in flight, its own messages.

SQLite in the data folder. A sync batch's token and the messages the bot must answer
are committed in one transaction before any answer starts, and a message is marked
done only after its answer is sent. So a crash or restart neither drops a message
(pending ones are picked up again) nor answers one twice (done ones are skipped).

The bot's reply to a pending message is kept with it as soon as it is first sent, so
that after a crash the answer goes into that same message (a placeholder, part of the
answer, or the restart notice) rather than a second one.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS inbox (
    event_id TEXT PRIMARY KEY,
    room_id TEXT NOT NULL,
    source TEXT,
    done INTEGER NOT NULL DEFAULT 0,
    received_ms INTEGER NOT NULL,
    reply_event_id TEXT
);
CREATE TABLE IF NOT EXISTS bot_messages (
    event_id TEXT PRIMARY KEY,
    room_id TEXT NOT NULL,
    thread_root TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS bot_threads ON bot_messages (room_id, thread_root);
CREATE TABLE IF NOT EXISTS joined_rooms (
    room_id TEXT PRIMARY KEY,
    joined_ms INTEGER NOT NULL,
    invited_as_direct INTEGER NOT NULL DEFAULT 0
);
"""


@dataclass(frozen=True)
class PendingEvent:
    room_id: str
    source: Mapping[str, Any]
    # The bot's message answering it, sent before a crash or restart; None if none.
    reply_event_id: str | None = None


def now_ms() -> int:
    return int(time.time() * 1000)


class StateStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)
        self._upgrade()

    def _upgrade(self) -> None:
        """Bring a state.sqlite3 written by an older version up to SCHEMA, in place.

        There is no migration framework yet: each column added since is added here when
        missing (`CREATE TABLE IF NOT EXISTS` leaves an existing table as it was). Keep
        to additive changes; anything more deserves real migrations."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(inbox)")}
        if "reply_event_id" not in columns:
            self._db.execute("ALTER TABLE inbox ADD COLUMN reply_event_id TEXT")

    def close(self) -> None:
        self._db.close()

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def first_start_ms(self) -> int:
        """When the bot first ran with this data folder; older messages are never answered."""
        self._db.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('first_start_ms', ?)", (str(now_ms()),)
        )
        return int(self._meta("first_start_ms") or 0)

    def sync_token(self) -> str | None:
        return self._meta("sync_token")

    def store_batch(self, token: str, events: Iterable[PendingEvent]) -> list[PendingEvent]:
        """Record a sync batch; returns the events that were not seen before."""
        fresh = []
        with self._db:
            self._db.execute("BEGIN")
            for event in events:
                inserted = self._db.execute(
                    "INSERT OR IGNORE INTO inbox (event_id, room_id, source, received_ms)"
                    " VALUES (?, ?, ?, ?)",
                    (event.source["event_id"], event.room_id, json.dumps(event.source), now_ms()),
                )
                if inserted.rowcount:
                    fresh.append(event)
            self._db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('sync_token', ?)", (token,)
            )
        return fresh

    def pending_events(self) -> list[PendingEvent]:
        rows = self._db.execute(
            "SELECT room_id, source, reply_event_id FROM inbox WHERE done = 0 ORDER BY received_ms"
        ).fetchall()
        return [PendingEvent(room, json.loads(source), reply) for room, source, reply in rows]

    def record_reply(self, event_id: str, reply_event_id: str | None) -> None:
        """The bot's message answering the inbox's message `event_id`; None once it was
        taken back (the next reply is a new message)."""
        self._db.execute(
            "UPDATE inbox SET reply_event_id = ? WHERE event_id = ?", (reply_event_id, event_id)
        )

    def was_received(self, event_id: str) -> bool:
        """Whether the message was addressed to the bot (pending or answered)."""
        query = "SELECT 1 FROM inbox WHERE event_id = ?"
        return self._db.execute(query, (event_id,)).fetchone() is not None

    def mark_done(self, event_id: str) -> None:
        # The message text is dropped once answered: encrypted rooms' plaintext should
        # not pile up on disk.
        self._db.execute("UPDATE inbox SET done = 1, source = NULL WHERE event_id = ?", (event_id,))

    def record_bot_message(self, event_id: str, room_id: str, thread_root: str) -> None:
        self._db.execute(
            "INSERT OR IGNORE INTO bot_messages (event_id, room_id, thread_root) VALUES (?, ?, ?)",
            (event_id, room_id, thread_root),
        )

    def is_bot_message(self, event_id: str) -> bool:
        query = "SELECT 1 FROM bot_messages WHERE event_id = ?"
        return self._db.execute(query, (event_id,)).fetchone() is not None

    def thread_of(self, event_id: str) -> str | None:
        """The thread one of the bot's messages is in."""
        query = "SELECT thread_root FROM bot_messages WHERE event_id = ?"
        row = self._db.execute(query, (event_id,)).fetchone()
        return row[0] if row else None

    def bot_in_thread(self, room_id: str, thread_root: str) -> bool:
        return (
            self._db.execute(
                "SELECT 1 FROM bot_messages WHERE room_id = ? AND thread_root = ? LIMIT 1",
                (room_id, thread_root),
            ).fetchone()
            is not None
        )

    def record_join(self, room_id: str, joined_ms: int, invited_as_direct: bool) -> None:
        self._db.execute(
            "INSERT OR IGNORE INTO joined_rooms (room_id, joined_ms, invited_as_direct)"
            " VALUES (?, ?, ?)",
            (room_id, joined_ms, invited_as_direct),
        )

    def note_invited(self, room_id: str, invited_ms: int) -> None:
        """The invite is the room's cut-off when it is earlier than the join: a message
        sent to a new DM before the bot could join is the bot's."""
        self._db.execute(
            "UPDATE joined_rooms SET joined_ms = MIN(joined_ms, ?) WHERE room_id = ?",
            (invited_ms, room_id),
        )

    def joined_room(self, room_id: str) -> tuple[int, bool]:
        """When the bot joined the room, and whether it was invited to a direct chat."""
        query = "SELECT joined_ms, invited_as_direct FROM joined_rooms WHERE room_id = ?"
        row = self._db.execute(query, (room_id,)).fetchone()
        return (row[0], bool(row[1])) if row else (0, False)
