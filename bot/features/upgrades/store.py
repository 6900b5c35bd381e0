"""Which rooms were upgraded into which (an `m.room.tombstone` the bot followed), kept
beside the state store: everything the bot keeps by room follows the chain."""

from __future__ import annotations

from typing import Protocol

from core.ids import RoomID
from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

V1 = """
CREATE TABLE IF NOT EXISTS room_upgrades (
    old_room TEXT PRIMARY KEY, new_room TEXT NOT NULL, at_ms BIGINT NOT NULL
);
"""
UPGRADES = UpgradeTable("room_upgrades", [Upgrade("each room's successor", V1, V1)])


def decide_predecessors(room: str, successors: dict[str, str]) -> tuple[RoomID, ...]:
    """The rooms `room` replaced, newest first (a room upgraded twice has two)."""
    before = {new: old for old, new in successors.items()}
    found: list[RoomID] = []
    current = room
    while (old := before.get(current)) is not None and old not in found and old != room:
        found.append(RoomID(old))
        current = old
    return tuple(found)


class UpgradeStore(Protocol):
    async def record_upgrade(self, old: str, new: str, at_ms: int) -> bool: ...
    async def successors(self) -> dict[str, str]: ...


class SqlUpgradeStore(SqlStore):
    upgrades = UPGRADES

    async def record_upgrade(self, old: str, new: str, at_ms: int) -> bool:
        """Keep that `old` was replaced by `new`; whether it is news."""
        added = await self.db.execute(
            "INSERT INTO room_upgrades VALUES (?, ?, ?) ON CONFLICT (old_room) DO NOTHING",
            old,
            new,
            at_ms,
        )
        return added > 0

    async def successors(self) -> dict[str, str]:
        rows = await self.db.fetch("SELECT old_room, new_room FROM room_upgrades")
        return {str(old): str(new) for old, new in rows}
