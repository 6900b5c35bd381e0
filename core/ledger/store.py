"""The rooms' ledgers of decisions and action items, kept beside the summary marks. Like
every store, keyed by room: no method reads across rooms."""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections.abc import Iterable, Sequence
from typing import Protocol

from core.ledger.entries import decide_new_entries
from core.storage.database import Database
from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable
from core.summaries.ledger_entries import LedgerEntry

# `entry_key` (a hash of kind, message and text) keeps an entry found again once; the
# text itself cannot be in a PostgreSQL index (rows over 2.7 kB are refused). `cited`:
# every message the entry comes from, space-separated, so a redaction of any of them
# removes it.
V1 = """
CREATE TABLE IF NOT EXISTS ledger (
    room TEXT NOT NULL, entry_key TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL,
    owner TEXT NOT NULL, due TEXT NOT NULL, due_ts DOUBLE PRECISION, link TEXT NOT NULL,
    event_id TEXT NOT NULL, ts DOUBLE PRECISION NOT NULL, verbatim INTEGER NOT NULL,
    cited TEXT NOT NULL,
    PRIMARY KEY (room, entry_key)
);
CREATE INDEX IF NOT EXISTS ledger_of_room ON ledger (room, kind, ts);
"""
UPGRADES = UpgradeTable("ledger", [Upgrade("decisions and action items per room", V1, V1)])
COLUMNS = "kind, text, owner, due, link, event_id, ts, verbatim"


class LedgerStore(Protocol):
    async def add_entries(
        self, room: str, entries: Iterable[tuple[LedgerEntry, float | None]]
    ) -> None: ...
    async def entries(
        self,
        room: str,
        kind: str | None,
        *,
        since: float = -math.inf,
        due_after: float = -math.inf,
    ) -> list[LedgerEntry]: ...
    async def follow_edit(self, room: str, event_id: str, text: str, edit: str = "") -> None: ...
    async def forget_event(self, room: str, event_id: str) -> int: ...
    async def purge_before(self, room: str, cutoff: float) -> int: ...
    async def erase_freed(self) -> None: ...


def _key(entry: LedgerEntry) -> str:
    return hashlib.sha256(f"{entry.kind}\0{entry.event_id}\0{entry.text}".encode()).hexdigest()


class SqlLedgerStore(SqlStore):
    upgrades = UPGRADES

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        # One check-then-insert at a time (a room's summaries run in the one process
        # that holds the account).
        self._adding = asyncio.Lock()

    async def add_entries(
        self, room: str, entries: Iterable[tuple[LedgerEntry, float | None]]
    ) -> None:
        """Keep entries (each with its deadline as a time, if known); one found again by a
        later summary, in the same words or others, is kept once (`decide_new_entries`)."""
        entries = list(entries)
        async with self._adding:  # a scheduled summary and a !summarize of one hour
            found = [e for e, _ in entries]
            new = decide_new_entries(found, await self._citing(room, found))
            await self._insert(room, [(e, due_ts) for e, due_ts in entries if e in new])

    async def _insert(self, room: str, entries: list[tuple[LedgerEntry, float | None]]) -> None:
        rows = [
            (
                room,
                _key(e),
                e.kind,
                e.text,
                e.owner,
                e.due,
                due_ts,
                e.link,
                e.event_id,
                e.ts,
                int(e.verbatim),
                f" {' '.join((e.event_id, *e.cited))} ",
            )
            for e, due_ts in entries
        ]
        if rows:
            await self.db.executemany(
                "INSERT INTO ledger VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                rows,
            )

    async def _citing(self, room: str, entries: Sequence[LedgerEntry]) -> list[LedgerEntry]:
        """The room's kept entries that cite the message of one of `entries`, or whose
        message one of them cites."""
        if not entries:
            return []
        messages = sorted({m for e in entries for m in (e.event_id, *e.cited)})
        own = sorted({e.event_id for e in entries})
        rows = await self.db.fetch(
            f"SELECT {COLUMNS}, cited FROM ledger WHERE room = ? AND (event_id IN"
            f" ({', '.join('?' * len(messages))}) OR {' OR '.join(['cited LIKE ?'] * len(own))})",
            room,
            *messages,
            *(f"% {m} %" for m in own),
        )
        return [
            LedgerEntry(
                r[0], r[1], r[2], r[3], r[4], r[5], float(r[6]), bool(r[7]), tuple(r[8].split())
            )
            for r in rows
        ]

    async def entries(
        self,
        room: str,
        kind: str | None,
        *,
        since: float = -math.inf,
        due_after: float = -math.inf,
    ) -> list[LedgerEntry]:
        """The room's entries of a kind (None: both), said at `since` or later, newest
        first; `due_after`: only those without a deadline or with one after it."""
        rows = await self.db.fetch(
            f"SELECT {COLUMNS} FROM ledger WHERE room = ? AND (? = '' OR kind = ?)"
            " AND ts >= ? AND (due_ts IS NULL OR due_ts >= ?) ORDER BY ts DESC",
            room,
            kind or "",
            kind or "",
            max(since, -1e18),
            max(due_after, -1e18),
        )
        return [
            LedgerEntry(r[0], r[1], r[2], r[3], r[4], r[5], float(r[6]), verbatim=bool(r[7]))
            for r in rows
        ]

    async def follow_edit(self, room: str, event_id: str, text: str, edit: str = "") -> None:
        """A message was edited (by the event `edit`): the entries that quote it quote its
        new text, and go when that edit is redacted."""
        await self.db.execute(
            "UPDATE ledger SET text = ?, cited = cited || ? WHERE room = ? AND event_id = ?"
            " AND verbatim = 1",
            text,
            f"{edit} " if edit else "",
            room,
            event_id,
        )

    async def forget_event(self, room: str, event_id: str) -> int:
        """A message was redacted: what was found in it goes."""
        return await self.db.execute(
            "DELETE FROM ledger WHERE room = ? AND cited LIKE ?", room, f"% {event_id} %"
        )

    async def purge_before(self, room: str, cutoff: float) -> int:
        """Forget what was found in messages said before `cutoff` (the room's retention)."""
        return await self.db.execute("DELETE FROM ledger WHERE room = ? AND ts < ?", room, cutoff)
