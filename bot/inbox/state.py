"""The bot's durable memory of Matrix: sync position, messages in flight, its own messages.

A sync batch's token and the messages the bot must answer are committed in one
transaction before any answer starts, and a message is marked done only after its
answer is sent. So a crash or restart neither drops a message (pending ones are picked
up again) nor answers one twice (done ones are skipped).

The bot's reply to a pending message is kept with it as soon as it is first sent, so
that after a crash the answer goes into that same message (a placeholder, part of the
answer, or the restart notice) rather than a second one.

What to do with a message is decided once, when it is stored (see bot/inbox/routing.py), and
kept with it: a process that takes over after a crash carries out the same decision.
Messages are numbered in order of arrival; the answer workers take them in that order.

Only the process holding the account's lease syncs and answers (bot/runtime/leadership.py); a
batch is stored only while that lease is still this process's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
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


# Messages stored by an earlier release have no decision (decided when answered) and
# are numbered in the order they came.
V3 = """
ALTER TABLE inbox ADD COLUMN decision TEXT;
ALTER TABLE inbox ADD COLUMN arrival BIGINT;
UPDATE inbox SET arrival = numbered.n FROM (
    SELECT event_id, ROW_NUMBER() OVER (ORDER BY received_ms, event_id) AS n FROM inbox
) AS numbered WHERE inbox.event_id = numbered.event_id;
CREATE INDEX IF NOT EXISTS inbox_arrival ON inbox (done, arrival);
CREATE INDEX IF NOT EXISTS inbox_last_arrival ON inbox (arrival);
CREATE TABLE IF NOT EXISTS leases (
    name TEXT PRIMARY KEY, holder TEXT NOT NULL, until_ms BIGINT NOT NULL
);
"""

# Answered messages keep no text: their decisions held it (an earlier release's). A
# redacted message is marked, so that an answer finishing after the redaction keeps
# nothing of it either.
V4 = """
UPDATE inbox SET source = NULL, decision = NULL WHERE done = 1;
ALTER TABLE inbox ADD COLUMN redacted INTEGER NOT NULL DEFAULT 0;
"""

# The transcripts the bot posted of voice messages: a redaction of the voice message
# takes its transcript down too.
V5 = """
CREATE TABLE IF NOT EXISTS transcripts (
    voice_event_id TEXT PRIMARY KEY,
    room_id TEXT NOT NULL,
    transcript_event_id TEXT NOT NULL
);
"""

UPGRADES = UpgradeTable(
    "state",
    [
        Upgrade("sync token, inbox, the bot's messages, joined rooms", _v1_sqlite, V1_TABLES),
        Upgrade(
            "the pending messages found without a scan of the whole inbox",
            "CREATE INDEX IF NOT EXISTS inbox_pending ON inbox (done, received_ms)",
            "CREATE INDEX IF NOT EXISTS inbox_pending ON inbox (done, received_ms)",
        ),
        Upgrade("decisions kept with messages, order of arrival, the syncing lease", V3, V3),
        Upgrade("no text kept of answered messages", V4, V4),
        Upgrade("the transcripts posted of voice messages", V5, V5),
    ],
)


class LeaseLost(Exception):
    """Another process holds the lease now: this one must stop syncing and answering."""


@dataclass(frozen=True)
class PendingEvent:
    room_id: str
    source: Mapping[str, Any]
    # The bot's message answering it, sent before a crash or restart; None if none.
    reply_event_id: str | None = None
    # What to do with it (bot/inbox/decisions.py's encoded decision); None: decide when handled.
    decision: Mapping[str, Any] | None = None
    # Its number in order of arrival, once stored.
    arrival: int = 0


def _decision(stored: str | None) -> Mapping[str, Any] | None:
    return json.loads(stored) if stored else None


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Lease:
    """Who holds which lease: the account's user id, and one process's own name."""

    name: str
    holder: str


class LeaseStore(Protocol):
    async def take_lease(self, lease: Lease, seconds: float) -> bool: ...
    async def release_lease(self, lease: Lease) -> None: ...


class StateStore(LeaseStore, Protocol):
    async def first_start_ms(self) -> int: ...
    async def sync_token(self) -> str | None: ...
    async def store_batch(
        self, token: str, events: Iterable[PendingEvent], lease: Lease | None = None
    ) -> list[PendingEvent]: ...
    async def pending_events(
        self, after: int = 0, limit: int | None = None
    ) -> list[PendingEvent]: ...
    async def record_reply(self, event_id: str, reply_event_id: str | None) -> None: ...
    async def store_decision(self, event_id: str, decision: Mapping[str, Any]) -> None: ...
    async def was_received(self, event_id: str) -> bool: ...
    async def pending_kind(self, room_id: str, event_id: str) -> str | None: ...
    async def mark_done(self, event_id: str) -> None: ...
    async def forget_message(self, room_id: str, event_id: str) -> None: ...
    async def was_redacted(self, event_id: str) -> bool: ...
    async def erase_freed(self) -> None: ...
    async def purge_done(self, before_ms: int) -> int: ...
    async def record_bot_message(self, event_id: str, room_id: str, thread_root: str) -> None: ...
    async def is_bot_message(self, event_id: str) -> bool: ...
    async def record_transcript(
        self, room_id: str, voice_event_id: str, transcript_event_id: str
    ) -> None: ...
    async def take_transcript(self, room_id: str, voice_event_id: str) -> str | None: ...
    async def thread_of(self, event_id: str) -> str | None: ...
    async def bot_in_thread(self, room_id: str, thread_root: str) -> bool: ...
    async def record_join(self, room_id: str, joined_ms: int, invited_as_direct: bool) -> None: ...
    async def note_invited(self, room_id: str, invited_ms: int) -> None: ...
    async def joined_room(self, room_id: str) -> tuple[int, bool]: ...


class SqlStateStore(SqlStore):
    """The state store over either backend (see core/storage)."""

    upgrades = UPGRADES

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        # Epoch milliseconds now (leases, arrivals): tests move it on instead of waiting.
        self.clock: Callable[[], int] = now_ms

    async def _meta(self, key: str) -> str | None:
        return await self.db.fetchval("SELECT value FROM meta WHERE key = ?", key)

    async def first_start_ms(self) -> int:
        """When the bot first ran with this data folder; older messages are never answered."""
        await self.db.execute(
            "INSERT INTO meta (key, value) VALUES ('first_start_ms', ?) ON CONFLICT DO NOTHING",
            str(self.clock()),
        )
        return int(await self._meta("first_start_ms") or 0)

    async def sync_token(self) -> str | None:
        return await self._meta("sync_token")

    async def store_batch(
        self, token: str, events: Iterable[PendingEvent], lease: Lease | None = None
    ) -> list[PendingEvent]:
        """Record a sync batch with the decisions; returns the events that were not seen
        before, numbered. Raises LeaseLost, storing nothing, once `lease` is another's."""
        fresh = []
        async with self.db.transaction() as tx:
            # An UPDATE, not a SELECT: on PostgreSQL it locks the lease row until commit,
            # so no other process can take the lease between this check and the commit.
            if lease and not await tx.execute(
                "UPDATE leases SET until_ms = until_ms WHERE name = ? AND holder = ?"
                " AND until_ms > ?",
                lease.name,
                lease.holder,
                self.clock(),
            ):
                raise LeaseLost(lease.name)
            arrival = int(await tx.fetchval("SELECT COALESCE(MAX(arrival), 0) FROM inbox"))
            for event in events:
                decision = json.dumps(event.decision) if event.decision is not None else None
                inserted = await tx.execute(
                    "INSERT INTO inbox (event_id, room_id, source, received_ms, decision, arrival)"
                    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    event.source["event_id"],
                    event.room_id,
                    json.dumps(event.source),
                    self.clock(),
                    decision,
                    arrival + 1,
                )
                if inserted:
                    arrival += 1
                    fresh.append(replace(event, arrival=arrival))
            await tx.execute(
                "INSERT INTO meta (key, value) VALUES ('sync_token', ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                token,
            )
        return fresh

    async def pending_events(self, after: int = 0, limit: int | None = None) -> list[PendingEvent]:
        """Messages not answered yet, in order of arrival: those numbered after `after`,
        at most `limit` of them."""
        query = (
            "SELECT room_id, source, reply_event_id, decision, arrival FROM inbox"
            " WHERE done = 0 AND arrival > ? ORDER BY arrival"
        )
        rows = await self.db.fetch(query + (f" LIMIT {int(limit)}" if limit else ""), after)
        return [
            PendingEvent(room, json.loads(source), reply, _decision(decision), int(arrival))
            for room, source, reply, decision, arrival in rows
        ]

    async def take_lease(self, lease: Lease, seconds: float) -> bool:
        """Take or renew `lease` for `seconds`: true when it is free, expired or already
        this holder's. Times are the hosts' clocks (keep them in sync, as NTP does)."""
        now = self.clock()
        taken = await self.db.execute(
            "INSERT INTO leases (name, holder, until_ms) VALUES (?, ?, ?)"
            " ON CONFLICT (name) DO UPDATE"
            " SET holder = excluded.holder, until_ms = excluded.until_ms"
            " WHERE leases.holder = excluded.holder OR leases.until_ms <= ?",
            lease.name,
            lease.holder,
            now + int(seconds * 1000),
            now,
        )
        return bool(taken)

    async def release_lease(self, lease: Lease) -> None:
        """Give the lease up at once (a clean stop): a standby need not wait for it to end."""
        await self.db.execute(
            "DELETE FROM leases WHERE name = ? AND holder = ?", lease.name, lease.holder
        )

    async def store_decision(self, event_id: str, decision: Mapping[str, Any]) -> None:
        """Replace a pending message's stored decision (decided again after an upgrade)."""
        await self.db.execute(
            "UPDATE inbox SET decision = ? WHERE event_id = ? AND done = 0",
            json.dumps(decision),
            event_id,
        )

    async def record_reply(self, event_id: str, reply_event_id: str | None) -> None:
        """The bot's message answering the inbox's message `event_id` (once taken back,
        still that message, redacted: a later run finds it gone and replies anew)."""
        await self.db.execute(
            "UPDATE inbox SET reply_event_id = ? WHERE event_id = ?", reply_event_id, event_id
        )

    async def was_received(self, event_id: str) -> bool:
        """Whether the message was addressed to the bot (pending or answered)."""
        return (
            await self.db.fetchrow("SELECT 1 FROM inbox WHERE event_id = ?", event_id) is not None
        )

    async def pending_kind(self, room_id: str, event_id: str) -> str | None:
        """The kind of decision (such as "KeepFile") of this room's event while it waits
        or is being handled; None once done, or for an event the inbox does not hold."""
        row = await self.db.fetchrow(
            "SELECT decision FROM inbox WHERE event_id = ? AND room_id = ? AND done = 0",
            event_id,
            room_id,
        )
        decision = _decision(row[0]) if row is not None else None
        return str(decision.get("kind")) if decision else None

    async def mark_done(self, event_id: str) -> None:
        # Nothing of the message's text is kept once it is answered (its source, and its
        # decision, which may quote it): no text outlives its handling, and a redaction
        # need not reach here.
        await self.db.execute(
            "UPDATE inbox SET done = 1, source = NULL, decision = NULL WHERE event_id = ?",
            event_id,
        )

    async def forget_message(self, room_id: str, event_id: str) -> None:
        """A message of the room was redacted: its text goes, it is not answered any
        more, and an answer being written for it keeps nothing of it (`was_redacted`).
        A redaction names its target by id alone: one of another room is no redaction
        of this message."""
        await self.db.execute(
            "UPDATE inbox SET done = 1, source = NULL, decision = NULL, redacted = 1"
            " WHERE event_id = ? AND room_id = ?",
            event_id,
            room_id,
        )

    async def was_redacted(self, event_id: str) -> bool:
        query = "SELECT 1 FROM inbox WHERE event_id = ? AND redacted = 1"
        return await self.db.fetchrow(query, event_id) is not None

    async def purge_done(self, before_ms: int) -> int:
        """Answered messages received before `before_ms` go altogether (their ids served
        only to tell an edit of an answered question from a new one). The newest row
        stays: messages are numbered on from it (`store_batch`), and a running feeder
        asks for those after the last number it saw."""
        return await self.db.execute(
            "DELETE FROM inbox WHERE done = 1 AND received_ms < ?"
            " AND arrival < (SELECT MAX(arrival) FROM inbox)",
            before_ms,
        )

    async def record_bot_message(self, event_id: str, room_id: str, thread_root: str) -> None:
        await self.db.execute(
            "INSERT INTO bot_messages (event_id, room_id, thread_root) VALUES (?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            event_id,
            room_id,
            thread_root,
        )

    async def is_bot_message(self, event_id: str) -> bool:
        query = "SELECT 1 FROM bot_messages WHERE event_id = ?"
        return await self.db.fetchrow(query, event_id) is not None

    async def record_transcript(
        self, room_id: str, voice_event_id: str, transcript_event_id: str
    ) -> None:
        """The bot posted the transcript of this room's voice message (its id, no text)."""
        await self.db.execute(
            "INSERT INTO transcripts (voice_event_id, room_id, transcript_event_id)"
            " VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            voice_event_id,
            room_id,
            transcript_event_id,
        )

    async def take_transcript(self, room_id: str, voice_event_id: str) -> str | None:
        """The transcript posted of this room's voice message, forgotten as it is taken
        (its voice message was redacted); None if none was posted."""
        found = await self.db.fetchval(
            "SELECT transcript_event_id FROM transcripts WHERE voice_event_id = ? AND room_id = ?",
            voice_event_id,
            room_id,
        )
        if found is not None:
            await self.db.execute(
                "DELETE FROM transcripts WHERE voice_event_id = ? AND room_id = ?",
                voice_event_id,
                room_id,
            )
        return found

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
            room_id,
            joined_ms,
            int(invited_as_direct),
        )

    async def note_invited(self, room_id: str, invited_ms: int) -> None:
        """The invite is the room's cut-off when it is earlier than the join: a message
        sent to a new DM before the bot could join is the bot's."""
        await self.db.execute(
            "UPDATE joined_rooms SET joined_ms = ? WHERE room_id = ? AND joined_ms > ?",
            invited_ms,
            room_id,
            invited_ms,
        )

    async def joined_room(self, room_id: str) -> tuple[int, bool]:
        """When the bot joined the room, and whether it was invited to a direct chat."""
        query = "SELECT joined_ms, invited_as_direct FROM joined_rooms WHERE room_id = ?"
        row = await self.db.fetchrow(query, room_id)
        return (int(row[0]), bool(row[1])) if row else (0, False)
