"""The answer started beside the pre-step: its words are held back until the pre-step
has let the question through, so that nothing shown ever needs taking back.

A question that needs nothing from the conversation is answered from the sources found
for its own words while the pre-step still runs. If the pre-step declines it (toxic,
injection, out of scope, a comment, something to remember) or rewrites it, the early
answer is cancelled unseen; if it lets it through as asked, the held words are shown at
once and the rest streams on. One model call on the critical path instead of two, at
the price of a wasted answer call when the pre-step says otherwise.
"""

from __future__ import annotations

import asyncio
from typing import Any

from core.requests import Progress


class HeldProgress:
    """A progress callback that keeps the latest text until `release`, then passes it on."""

    def __init__(self, progress: Progress | None) -> None:
        self._progress = progress
        self._latest: str | None = None
        self._released = False

    async def __call__(self, text: str) -> None:
        self._latest = text
        if self._released and self._progress is not None:
            await self._progress(text)

    async def release(self) -> None:
        """Show what was held, and pass everything on from now."""
        self._released = True
        if self._latest is not None and self._progress is not None:
            await self._progress(self._latest)


def drop(task: asyncio.Task[Any]) -> None:
    """Cancel a task whose result is not wanted (a finished one is left as it is), without
    an unretrieved-exception warning."""
    task.cancel()
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
