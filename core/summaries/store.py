"""Where each room's summaries have reached.

A scheduled run claims its range by moving the room's mark with a compare-and-set: of
two processes that fire at once, one moves it and runs, the other finds it moved and
does nothing. A failed run moves the mark back.
"""

from __future__ import annotations

from typing import Protocol

from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

# The table the release before versioned migrations created through SQLAlchemy, in the
# scheduler's file (its `any` column is quoted: PostgreSQL reserves the word).
V1 = """
CREATE TABLE IF NOT EXISTS summary_marks (
    room VARCHAR(255) NOT NULL PRIMARY KEY,
    scheduled FLOAT NOT NULL,
    "any" FLOAT NOT NULL
);
"""
UPGRADES = UpgradeTable("summaries", [Upgrade("the summary marks", V1, V1)])


class SummaryMarks(Protocol):
    async def last_summary(self, room: str) -> float | None: ...
    async def last_scheduled(self, room: str) -> float | None: ...
    async def note_summary(self, room: str, end: float) -> None: ...
    async def give_back_summary(self, room: str, end: float, previous: float | None) -> None: ...
    async def claim(self, room: str, old: float, new: float) -> bool: ...


class SqlSummaryMarks(SqlStore):
    upgrades = UPGRADES

    async def _row(self, room: str) -> tuple[float, float] | None:
        query = 'SELECT scheduled, "any" FROM summary_marks WHERE room = ?'
        row = await self.db.fetchrow(query, room)
        return (float(row[0]), float(row[1])) if row else None

    async def last_summary(self, room: str) -> float | None:
        """When the last summary of the room (of any kind) ended."""
        row = await self._row(room)
        return row[1] if row and row[1] else None

    async def last_scheduled(self, room: str) -> float | None:
        row = await self._row(room)
        return row[0] if row and row[0] else None

    async def note_summary(self, room: str, end: float) -> None:
        await self._ensure(room)
        await self.db.execute(
            'UPDATE summary_marks SET "any" = ? WHERE room = ? AND "any" < ?', end, room, end
        )

    async def give_back_summary(self, room: str, end: float, previous: float | None) -> None:
        """Move the last summary's mark back from `end` to `previous` (a summary that was
        not posted), unless a later summary moved it on since."""
        await self.db.execute(
            'UPDATE summary_marks SET "any" = ? WHERE room = ? AND "any" = ?',
            previous or 0,
            room,
            end,
        )

    async def claim(self, room: str, old: float, new: float) -> bool:
        """Move the scheduled mark from `old` to `new`; False if another run moved it."""
        await self._ensure(room)
        moved = await self.db.execute(
            "UPDATE summary_marks SET scheduled = ? WHERE room = ? AND scheduled = ?",
            new,
            room,
            old,
        )
        return moved == 1

    async def _ensure(self, room: str) -> None:
        await self.db.execute(
            'INSERT INTO summary_marks (room, scheduled, "any") VALUES (?, 0, 0)'
            " ON CONFLICT DO NOTHING",
            room,
        )
