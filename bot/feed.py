"""The last lines of each room and thread, kept in memory as context for questions."""

from __future__ import annotations

from collections import defaultdict, deque

from core.requests import ChatLine

MAX_LINES = 200


class Feed:
    def __init__(self) -> None:
        self._lines: dict[tuple[str, str | None], deque[tuple[str, ChatLine]]] = defaultdict(
            lambda: deque(maxlen=MAX_LINES)
        )

    def add(self, room_id: str, thread_root: str | None, event_id: str, line: ChatLine) -> None:
        self._lines[(room_id, thread_root)].append((event_id, line))

    def recent(
        self, room_id: str, thread_root: str | None, count: int, before: str
    ) -> tuple[ChatLine, ...]:
        """Up to `count` lines that came before the event `before`, oldest first."""
        lines = []
        for event_id, line in self._lines.get((room_id, thread_root), ()):
            if event_id == before:
                break
            lines.append(line)
        return tuple(lines[-count:]) if count else ()
