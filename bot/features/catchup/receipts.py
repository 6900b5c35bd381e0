"""Where each person last read each room (their public read receipts, as the sync
brings them), for `!catchup`. Kept beside the state store, in the same database."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from bot.matrix.types import ReadReceipt
from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

V1 = """
CREATE TABLE IF NOT EXISTS read_receipts (
    room TEXT NOT NULL, user_id TEXT NOT NULL, event_id TEXT NOT NULL, ts_ms BIGINT NOT NULL,
    PRIMARY KEY (room, user_id)
);
"""
V2 = """
CREATE TABLE IF NOT EXISTS direct_rooms (user_id TEXT PRIMARY KEY, room_id TEXT NOT NULL);
"""
UPGRADES = UpgradeTable(
    "receipts",
    [
        Upgrade("the last read receipt per room and person", V1, V1),
        Upgrade("the direct chat the bot made with each person", V2, V2),
    ],
)


class ReceiptStore(Protocol):
    async def store_receipts(self, receipts: Iterable[ReadReceipt]) -> None: ...
    async def last_read(self, room: str, user_id: str) -> ReadReceipt | None: ...
    async def direct_room(self, user_id: str) -> str | None: ...
    async def set_direct_room(self, user_id: str, room_id: str) -> None: ...


class SqlReceiptStore(SqlStore):
    upgrades = UPGRADES

    async def store_receipts(self, receipts: Iterable[ReadReceipt]) -> None:
        """Keep the latest receipt per room and person (a late, older one changes nothing)."""
        rows = [(r.room, r.user_id, r.event_id, r.ts_ms) for r in receipts]
        if not rows:
            return
        await self.db.executemany(
            "INSERT INTO read_receipts VALUES (?, ?, ?, ?) ON CONFLICT (room, user_id) DO UPDATE"
            " SET event_id = excluded.event_id, ts_ms = excluded.ts_ms"
            " WHERE read_receipts.ts_ms <= excluded.ts_ms",
            rows,
        )

    async def last_read(self, room: str, user_id: str) -> ReadReceipt | None:
        row = await self.db.fetchrow(
            "SELECT room, user_id, event_id, ts_ms FROM read_receipts"
            " WHERE room = ? AND user_id = ?",
            room,
            user_id,
        )
        return ReadReceipt(row[0], row[1], row[2], int(row[3])) if row else None

    async def direct_room(self, user_id: str) -> str | None:
        """The private chat the bot keeps with a person for what only they may read."""
        return await self.db.fetchval("SELECT room_id FROM direct_rooms WHERE user_id = ?", user_id)

    async def set_direct_room(self, user_id: str, room_id: str) -> None:
        await self.db.execute(
            "INSERT INTO direct_rooms VALUES (?, ?) ON CONFLICT (user_id)"
            " DO UPDATE SET room_id = excluded.room_id",
            user_id,
            room_id,
        )
