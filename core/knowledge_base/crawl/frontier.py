"""The URLs a run still has to fetch, in order, and all it has taken in (pure).

Breadth first: sitemap pages and start pages come first, links are fetched after the
pages that linked them. The frontier never takes in more than `limit` URLs, so a run
fetches at most `max_pages` pages however many links it finds."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    url: str
    # Its links are followed (a start page, or a page found by a link); sitemap pages'
    # links are not.
    follow: bool


class Frontier:
    def __init__(self, limit: int, done: Iterable[str] = (), queued: Iterable[Entry] = ()):
        """A frontier, possibly as a saved run left it (`done` URLs, `queued` entries)."""
        self.limit = limit
        self.done: set[str] = set(done)
        self._queue: deque[Entry] = deque()
        self._taken: set[str] = set(self.done)
        self.overflowed = False
        for entry in queued:
            self.add(entry.url, entry.follow)

    def add(self, url: str, follow: bool) -> bool:
        """Take in a URL; False when it was already taken or the limit is reached (then
        `overflowed`: the run does not reach every page)."""
        if url in self._taken:
            return False
        if len(self._taken) >= self.limit:
            self.overflowed = True
            return False
        self._taken.add(url)
        self._queue.append(Entry(url, follow))
        return True

    def pop(self) -> Entry | None:
        return self._queue.popleft() if self._queue else None

    def finish(self, url: str) -> None:
        self.done.add(url)

    def __len__(self) -> int:
        return len(self._queue)

    @property
    def taken(self) -> frozenset[str]:
        """Every URL of the run: fetched, being fetched or queued."""
        return frozenset(self._taken)
