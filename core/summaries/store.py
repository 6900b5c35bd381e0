"""Where each room's summaries have reached, in the scheduler's database (SQLAlchemy, so
that bot processes sharing a PostgreSQL job store share these marks too).

A scheduled run claims its range by moving the room's mark with a compare-and-set: of
two processes that fire at once, one moves it and runs, the other finds it moved and
does nothing. A failed run moves the mark back.
"""

from __future__ import annotations

from sqlalchemy import Column, Float, MetaData, String, Table, create_engine, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

METADATA = MetaData()
MARKS = Table(
    "summary_marks",
    METADATA,
    Column("room", String(255), primary_key=True),
    # The end of the last scheduled summary, and of the last summary of any kind.
    Column("scheduled", Float, nullable=False, default=0.0),
    Column("any", Float, nullable=False, default=0.0),
)


class SummaryMarks:
    def __init__(self, url: str) -> None:
        self.engine: Engine = create_engine(url)
        METADATA.create_all(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def _row(self, room: str) -> tuple[float, float] | None:
        with self.engine.connect() as db:
            row = db.execute(
                select(MARKS.c.scheduled, MARKS.c["any"]).where(MARKS.c.room == room)
            ).first()
        return (row[0], row[1]) if row else None

    def last_summary(self, room: str) -> float | None:
        """When the last summary of the room (of any kind) ended."""
        row = self._row(room)
        return row[1] if row and row[1] else None

    def last_scheduled(self, room: str) -> float | None:
        row = self._row(room)
        return row[0] if row and row[0] else None

    def note_summary(self, room: str, end: float) -> None:
        self._ensure(room)
        with self.engine.begin() as db:
            db.execute(
                update(MARKS).where(MARKS.c.room == room, MARKS.c["any"] < end).values(any=end)
            )

    def claim(self, room: str, old: float, new: float) -> bool:
        """Move the scheduled mark from `old` to `new`; False if another run moved it."""
        self._ensure(room)
        with self.engine.begin() as db:
            moved = db.execute(
                update(MARKS)
                .where(MARKS.c.room == room, MARKS.c.scheduled == old)
                .values(scheduled=new)
            )
        return moved.rowcount == 1

    def _ensure(self, room: str) -> None:
        if self._row(room) is not None:
            return
        try:
            with self.engine.begin() as db:
                db.execute(MARKS.insert().values(room=room, scheduled=0.0, any=0.0))
        except IntegrityError:
            pass  # another process added the room first
