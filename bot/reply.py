"""The bot's message in answer to one question: placeholder, streamed edits, final text, badge.

One message per answer: the first thing sent (a placeholder or the first streamed text)
is edited (`m.replace`) from then on, so that a thread shows one answer, not a trail.

Every write of computed text is checked against the room's readers first: text computed
for one audience is never posted once someone new can read the room (`AudienceChanged`).
Fixed sentences (the placeholder, failure notices) carry nothing of anyone's and are not.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from bot.audience import AudienceChanged, RoomAudience
from bot.events import IncomingMessage
from bot.matrix import MatrixIO
from bot.render import build_edit, build_notice
from bot.state import StateStore
from core import strings

STREAMING_MARK = " …"


class ReplyWriter:
    def __init__(
        self,
        matrix: MatrixIO,
        state: StateStore,
        message: IncomingMessage,
        thread_root: str,
        edit_seconds: float,
        audience: RoomAudience | None = None,
        holds: Callable[[RoomAudience], bool] | None = None,
    ) -> None:
        self.matrix = matrix
        self.state = state
        self.message = message
        self.thread_root = thread_root
        self.edit_seconds = edit_seconds
        # Who the reply is computed for, and the check that they are still all who read.
        self.audience = audience
        self.holds = holds
        self.event_id: str | None = None
        self.sent: list[str] = []  # the message and its edits, to take back
        # Told the id of the reply's message when it is first sent.
        self.on_sent: Callable[[str], None] | None = None
        self._lock = asyncio.Lock()
        self._last_edit = 0.0

    async def placeholder(self) -> None:
        async with self._lock:
            if self.event_id is None:
                self.event_id = await self._send(strings.PLACEHOLDER, notify=False)

    async def progress(self, text: str) -> None:
        """Show the answer so far, at most every `edit_seconds` (not per token)."""
        now = time.monotonic()
        if now - self._last_edit < self.edit_seconds:
            return
        self._last_edit = now
        await self._write(text + STREAMING_MARK, answer_id=None, notify=False, computed=True)

    async def finish(self, text: str, answer_id: str | None = None) -> str:
        """The final, computed text; returns the id of the message that holds it."""
        await self._write(text, answer_id=answer_id, notify=True, computed=True)
        assert self.event_id is not None
        return self.event_id

    async def finish_fixed(self, text: str) -> str:
        """A fixed sentence from `core.strings` in place of the answer (a notice)."""
        await self._write(text, answer_id=None, notify=True, computed=False)
        assert self.event_id is not None
        return self.event_id

    def still_holds(self) -> bool:
        return self.audience is None or self.holds is None or self.holds(self.audience)

    async def take_back(self) -> None:
        """Redact what was shown of this reply; the next write starts a new message."""
        async with self._lock:
            for event_id in reversed(self.sent):
                await self.matrix.redact(self.message.room_id, event_id, strings.TAKEN_BACK)
            self.sent.clear()
            self.event_id = None

    async def _write(self, text: str, *, answer_id: str | None, notify: bool, computed: bool):
        async with self._lock:
            if computed and not self.still_holds():
                raise AudienceChanged(self.message.room_id)
            if self.event_id is None:
                self.event_id = await self._send(text, notify=notify, answer_id=answer_id)
            else:
                content = build_edit(self.event_id, text, answer_id=answer_id)
                self.sent.append(await self.matrix.send(self.message.room_id, content))

    async def _send(self, text: str, *, notify: bool, answer_id: str | None = None) -> str:
        content = build_notice(
            text,
            thread_root=self.thread_root,
            reply_to=self.message.event_id,
            notify=self.message.sender if notify else None,
            answer_id=answer_id,
        )
        event_id = await self.matrix.send(self.message.room_id, content)
        self.sent.append(event_id)
        self.state.record_bot_message(event_id, self.message.room_id, self.thread_root)
        if self.on_sent is not None:
            self.on_sent(event_id)
        return event_id
