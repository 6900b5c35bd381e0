"""The bot's durable memory of Matrix: sync position, messages in flight, its own messages.

A sync batch's token and the messages the bot must answer are committed in one
transaction before any answer starts, and a message is marked done only after its
answer is sent. So a crash or restart neither drops a message (pending ones are picked
up again) nor answers one twice (done ones are skipped).

The bot's reply to a pending message is kept with it as soon as it is first sent, so
that after a crash the answer goes into that same message (a placeholder, part of the
answer, or the restart notice) rather than a second one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from core.storage.database import Database
from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

# The schema of the release before versioned migrations, adopted in place as version 1.
V1_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS inbox (
    event_id TEXT PRIMARY KEY,
    room_id TEXT NOT NULL,
    source TEXT,
    done INTEGER NOT NULL DEFAULT 0,
    received_ms BIGINT NOT NULL,
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
    joined_ms BIGINT NOT NULL,
    invited_as_direct INTEGER NOT NULL DEFAULT 0
);
"""


async def _v1_sqlite(db: Database) -> None:
    await db.run_script(V1_TABLES)
    # Files older still had no reply_event_id (it was added without a version).
    columns = {row[1] for row in await db.fetch("PRAGMA table_info(inbox)")}
    if "reply_event_id" not in columns:
        await db.execute("ALTER TABLE inbox ADD COLUMN reply_event_id TEXT")


UPGRADES = UpgradeTable(
    "state",
    [
        Upgrade("sync token, inbox, the bot's messages, joined rooms", _v1_sqlite, V1_TABLES),
        Upgrade(
            "the pending messages found without a scan of the whole inbox",
            "CREATE INDEX IF NOT EXISTS inbox_pending ON inbox (done, received_ms)",
            "CREATE INDEX IF NOT EXISTS inbox_pending ON inbox (done, received_ms)",
        ),
    ],
)


@dataclass(frozen=True)
class PendingEvent:
    room_id: str
    source: Mapping[str, Any]
    # The bot's message answering it, sent before a crash or restart; None if none.
    reply_event_id: str | None = None


def now_ms() -> int:
    return int(time.time() * 1000)


class StateStore(Protocol):
    async def first_start_ms(self) -> int: ...
    async def sync_token(self) -> str | None: ...
    async def store_batch(
        self, token: str, events: Iterable[PendingEvent]
    ) -> list[PendingEvent]: ...
    async def pending_events(self) -> list[PendingEvent]: ...
    async def record_reply(self, event_id: str, reply_event_id: str | None) -> None: ...
    async def was_received(self, event_id: str) -> bool: ...
    async def mark_done(self, event_id: str) -> None: ...
    async def record_bot_message(self, event_id: str, room_id: str, thread_root: str) -> None: ...
    async def is_bot_message(self, event_id: str) -> bool: ...
    async def thread_of(self, event_id: str) -> str | None: ...
    async def bot_in_thread(self, room_id: str, thread_root: str) -> bool: ...
    async def record_join(self, room_id: str, joined_ms: int, invited_as_direct: bool) -> None: ...
    async def note_invited(self, room_id: str, invited_ms: int) -> None: ...
    async def joined_room(self, room_id: str) -> tuple[int, bool]: ...


class SqlStateStore(SqlStore):
    """The state store over either backend (see core/storage)."""

    upgrades = UPGRADES

    async def _meta(self, key: str) -> str | None:
        return await self.db.fetchval("SELECT value FROM meta WHERE key = ?", key)

    async def first_start_ms(self) -> int:
        """When the bot first ran with this data folder; older messages are never answered."""
        await self.db.execute(
            "INSERT INTO meta (key, value) VALUES ('first_start_ms', ?) ON CONFLICT DO NOTHING",
            str(now_ms()),
        )
        return int(await self._meta("first_start_ms") or 0)

    async def sync_token(self) -> str | None:
        return await self._meta("sync_token")

    async def store_batch(self, token: str, events: Iterable[PendingEvent]) -> list[PendingEvent]:
        """Record a sync batch; returns the events that were not seen before."""
        fresh = []
        async with self.db.transaction() as tx:
            for event in events:
                inserted = await tx.execute(
                    "INSERT INTO inbox (event_id, room_id, source, received_ms)"
                    " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    event.source["event_id"], event.room_id, json.dumps(event.source), now_ms(),
                )  # fmt: skip
                if inserted:
                    fresh.append(event)
            await tx.execute(
                "INSERT INTO meta (key, value) VALUES ('sync_token', ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                token,
            )
        return fresh

    async def pending_events(self) -> list[PendingEvent]:
        rows = await self.db.fetch(
            "SELECT room_id, source, reply_event_id FROM inbox WHERE done = 0 ORDER BY received_ms"
        )
        return [PendingEvent(room, json.loads(source), reply) for room, source, reply in rows]

    async def record_reply(self, event_id: str, reply_event_id: str | None) -> None:
        """The bot's message answering the inbox's message `event_id`; None once it was
        taken back (the next reply is a new message)."""
        await self.db.execute(
            "UPDATE inbox SET reply_event_id = ? WHERE event_id = ?", reply_event_id, event_id
        )

    async def was_received(self, event_id: str) -> bool:
        """Whether the message was addressed to the bot (pending or answered)."""
        return (
            await self.db.fetchrow("SELECT 1 FROM inbox WHERE event_id = ?", event_id) is not None
        )

    async def mark_done(self, event_id: str) -> None:
        # The message text is dropped once answered: encrypted rooms' plaintext should
        # not pile up on disk.
        await self.db.execute(
            "UPDATE inbox SET done = 1, source = NULL WHERE event_id = ?", event_id
        )

    async def record_bot_message(self, event_id: str, room_id: str, thread_root: str) -> None:
        await self.db.execute(
            "INSERT INTO bot_messages (event_id, room_id, thread_root) VALUES (?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            event_id, room_id, thread_root,
        )  # fmt: skip

    async def is_bot_message(self, event_id: str) -> bool:
        query = "SELECT 1 FROM bot_messages WHERE event_id = ?"
        return await self.db.fetchrow(query, event_id) is not None

    async def thread_of(self, event_id: str) -> str | None:
        """The thread one of the bot's messages is in."""
        query = "SELECT thread_root FROM bot_messages WHERE event_id = ?"
        return await self.db.fetchval(query, event_id)

    async def bot_in_thread(self, room_id: str, thread_root: str) -> bool:
        query = "SELECT 1 FROM bot_messages WHERE room_id = ? AND thread_root = ? LIMIT 1"
        return await self.db.fetchrow(query, room_id, thread_root) is not None

    async def record_join(self, room_id: str, joined_ms: int, invited_as_direct: bool) -> None:
        await self.db.execute(
            "INSERT INTO joined_rooms (room_id, joined_ms, invited_as_direct) VALUES (?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            room_id, joined_ms, int(invited_as_direct),
        )  # fmt: skip

    async def note_invited(self, room_id: str, invited_ms: int) -> None:
        """The invite is the room's cut-off when it is earlier than the join: a message
        sent to a new DM before the bot could join is the bot's."""
        await self.db.execute(
            "UPDATE joined_rooms SET joined_ms = ? WHERE room_id = ? AND joined_ms > ?",
            invited_ms, room_id, invited_ms,
        )  # fmt: skip

    async def joined_room(self, room_id: str) -> tuple[int, bool]:
        """When the bot joined the room, and whether it was invited to a direct chat."""
        query = "SELECT joined_ms, invited_as_direct FROM joined_rooms WHERE room_id = ?"
        row = await self.db.fetchrow(query, room_id)
        return (int(row[0]), bool(row[1])) if row else (0, False)
