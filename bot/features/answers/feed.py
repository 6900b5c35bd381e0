"""The last lines of each room and thread, kept in memory as context for questions.

Each line keeps when it was said and, for the bot's answers, who they were written for:
a line is reused only for readers who could read it (see `recent`).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, replace

from core.ids import UserID
from core.requests import ChatLine

MAX_LINES = 200
# Conversations (a room's main timeline, or one thread) kept; the least recently active
# go first. An answer needs only the last lines of its own conversation.
MAX_CONVERSATIONS = 5_000


@dataclass(frozen=True)
class FeedLine:
    event_id: str
    line: ChatLine
    ts: float
    # The readers an answer of the bot's was computed for; None for people's messages.
    readers: frozenset[UserID] | None = None


class Feed:
    def __init__(self, max_conversations: int = MAX_CONVERSATIONS) -> None:
        self.max_conversations = max_conversations
        self._lines: OrderedDict[tuple[str, str | None], deque[FeedLine]] = OrderedDict()

    def add(
        self,
        room_id: str,
        thread_root: str | None,
        entry: FeedLine,
    ) -> None:
        key = (room_id, thread_root)
        lines = self._lines.get(key)
        if lines is None:
            lines = self._lines[key] = deque(maxlen=MAX_LINES)
            if len(self._lines) > self.max_conversations:
                self._lines.popitem(last=False)
        else:
            self._lines.move_to_end(key)
        # In the order said: a line that comes late (a voice message's transcript) takes
        # its place before the lines said after it.
        at = len(lines)
        while at > 0 and lines[at - 1].ts > entry.ts:
            at -= 1
        if at == len(lines):
            lines.append(entry)
            return
        if len(lines) == lines.maxlen:
            if at == 0:
                return  # older than every line kept
            lines.popleft()
            at -= 1
        lines.insert(at, entry)

    def follow(self, room_id: str, event_id: str, sender: str, text: str | None) -> None:
        """A message of the room was edited by its sender (`text`: its new text) or
        redacted (None): the conversation holds it as it is now, or not at all."""
        for (room, _), lines in self._lines.items():
            if room != room_id:
                continue
            for index, entry in enumerate(lines):
                if entry.event_id != event_id:
                    continue
                if text is None:
                    del lines[index]
                elif entry.line.sender == sender:
                    lines[index] = replace(entry, line=replace(entry.line, text=text))
                return

    def __len__(self) -> int:
        return len(self._lines)

    def recent(
        self,
        room_id: str,
        thread_root: str | None,
        count: int,
        before: str,
        *,
        readers: frozenset[UserID],
        since: float | None,
    ) -> tuple[ChatLine, ...]:
        """Up to `count` lines that came before the event `before`, oldest first: those
        said at `since` or later (None: none at all), and of the bot's answers only those
        written for all of `readers`."""
        if since is None or not count:
            return ()
        lines = []
        for entry in self._lines.get((room_id, thread_root), ()):
            if entry.event_id == before:
                break
            if entry.ts < since:
                continue
            if entry.readers is not None and not readers <= entry.readers:
                continue
            lines.append(entry.line)
        return tuple(lines[-count:])
