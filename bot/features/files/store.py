"""What became of each file shared in a room: kept as the room's knowledge, or not
readable and why (said to whoever asks about it). Beside the state store, in its database."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from core.storage.database import Row
from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

V1 = """
CREATE TABLE IF NOT EXISTS room_files (
    event_id TEXT PRIMARY KEY, room TEXT NOT NULL, name TEXT NOT NULL,
    sent_at DOUBLE PRECISION NOT NULL, state TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',
    collection TEXT NOT NULL DEFAULT '', doc_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS room_files_by_room ON room_files (room, sent_at);
"""
UPGRADES = UpgradeTable("room_files", [Upgrade("files shared in rooms", V1, V1)])

FileState = Literal["reading", "kept", "unreadable"]


@dataclass(frozen=True)
class RoomFile:
    event_id: str
    room: str
    name: str
    sent_at: float
    state: FileState
    reason: str
    collection: str
    doc_id: str


class FileStore(Protocol):
    async def store_file(self, file: RoomFile) -> None: ...
    async def room_file(self, event_id: str) -> RoomFile | None: ...
    async def forget_file(self, event_id: str) -> RoomFile | None: ...
    async def files_before(self, room: str, cutoff: float) -> list[RoomFile]: ...


class SqlFileStore(SqlStore):
    upgrades = UPGRADES

    async def store_file(self, file: RoomFile) -> None:
        await self.db.execute(
            "INSERT INTO room_files VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_id)"
            " DO UPDATE SET state = excluded.state, reason = excluded.reason,"
            " collection = excluded.collection, doc_id = excluded.doc_id",
            file.event_id,
            file.room,
            file.name,
            file.sent_at,
            file.state,
            file.reason,
            file.collection,
            file.doc_id,
        )

    async def room_file(self, event_id: str) -> RoomFile | None:
        row = await self.db.fetchrow(
            f"SELECT {COLUMNS} FROM room_files WHERE event_id = ?", event_id
        )
        return _file(row) if row else None

    async def forget_file(self, event_id: str) -> RoomFile | None:
        """The file's record, gone (its message was redacted); None if there was none."""
        row = await self.db.fetchrow(
            f"DELETE FROM room_files WHERE event_id = ? RETURNING {COLUMNS}", event_id
        )
        return _file(row) if row else None

    async def files_before(self, room: str, cutoff: float) -> list[RoomFile]:
        rows = await self.db.fetch(
            f"SELECT {COLUMNS} FROM room_files WHERE room = ? AND sent_at < ?", room, cutoff
        )
        return [_file(row) for row in rows]


COLUMNS = "event_id, room, name, sent_at, state, reason, collection, doc_id"


def _file(row: Row) -> RoomFile:
    return RoomFile(row[0], row[1], row[2], float(row[3]), row[4], row[5], row[6], row[7])
