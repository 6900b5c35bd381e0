"""Sliding-window rate limits per person and per room, kept in memory per process."""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable

WINDOW_SECONDS = 60.0


class RateLimiter:
    """Counts events per key in the last minute; a refused attempt is not counted."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._times: dict[str, deque[float]] = defaultdict(deque)

    def _recent(self, key: str) -> deque[float]:
        times = self._times[key]
        horizon = self.clock() - WINDOW_SECONDS
        while times and times[0] <= horizon:
            times.popleft()
        if not times:
            del self._times[key]  # a person or room gone quiet leaves nothing behind
        return times

    def allows(self, limits: dict[str, int]) -> str | None:
        """Record one event under every key, or return the first key over its limit
        (a limit of 0 is no limit) and record nothing."""
        for key, limit in limits.items():
            if limit and len(self._recent(key)) >= limit:
                return key
        now = self.clock()
        for key in limits:
            self._times[key].append(now)
        return None
