"""The bot's message in answer to one question: placeholder, streamed edits, final text, badge.

One message per answer: the first thing sent (a placeholder or the first streamed text)
is edited (`m.replace`) from then on, so that a thread shows one answer, not a trail.

Every write of computed text is checked against the room's readers first: text computed
for one audience is never posted once someone new can read the room (`AudienceChanged`).
Fixed sentences (the placeholder, failure notices) carry nothing of anyone's and are not.

After a crash or restart the reply to a message still pending resumes the message the
earlier run left (`resume_from`): the answer is edited into it, so that the thread never
keeps a stale "Working on it…" next to a second answer.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from bot.inbox.audience import AudienceChanged, RoomAudience
from bot.inbox.events import IncomingMessage
from bot.inbox.links import build_permalink
from bot.inbox.render import build_edit, build_notice
from bot.inbox.state import StateStore
from bot.matrix.account import SEND_ERRORS, MatrixAccount
from bot.matrix.types import MatrixError
from core import strings
from core.storage.database import StorageError

log = logging.getLogger(__name__)

STREAMING_MARK = " …"


D = TypeVar("D")
# Writes into the reply to an event, given its decision (of the kind it registered for).
ReplyHandler = Callable[["ReplyWriter", D], Awaitable[None]]


class ReplyWriter:
    def __init__(
        self,
        matrix: MatrixAccount,
        state: StateStore,
        message: IncomingMessage,
        thread_root: str,
        edit_seconds: float,
        audience: RoomAudience | None = None,
        holds: Callable[[RoomAudience], bool] | None = None,
        *,
        in_inbox: bool = False,
        resume_from: str | None = None,
        bookkeeping: set[asyncio.Task[None]] | None = None,
    ) -> None:
        """`in_inbox`: this is the reply to the pending message itself (not an extra
        notice), whose message id is kept with it in the inbox; `resume_from`: the message
        an earlier run sent as that reply, which this one takes over; `bookkeeping`: where
        the writes that record a sent message wait, for a shutdown to finish them."""
        self.bookkeeping = bookkeeping if bookkeeping is not None else set()
        self.matrix = matrix
        self.state = state
        self.message = message
        self.thread_root = thread_root
        self.edit_seconds = edit_seconds
        # Who the reply is computed for, and the check that they are still all who read.
        self.audience = audience
        self.holds = holds
        self.in_inbox = in_inbox
        self.event_id: str | None = None
        # An earlier run's message for this reply, until the first write takes it over.
        self.earlier: str | None = resume_from
        self.resumed_from = resume_from
        self._new_messages = 0
        self.sent: list[str] = []  # the message and its edits, to take back
        # Told the id of the reply's message when it is first sent.
        self.on_sent: Callable[[str], Awaitable[None]] | None = None
        self._lock = asyncio.Lock()
        self._last_edit = 0.0

    async def placeholder(self) -> None:
        """The placeholder; a resumed reply's message shows it again in place of what the
        earlier run left there (such as the restart notice)."""
        async with self._lock:
            if self.event_id is None:
                await self._show(strings.PLACEHOLDER, answer_id=None, notify=False)

    async def progress(self, text: str) -> None:
        """Show the answer so far, at most every `edit_seconds` (not per token)."""
        now = time.monotonic()
        if now - self._last_edit < self.edit_seconds:
            return
        self._last_edit = now
        await self._write(text + STREAMING_MARK, answer_id=None, notify=False, computed=True)

    async def finish(self, text: str, answer_id: str | None = None, *, notify: bool = True) -> str:
        """The final, computed text; returns the id of the message that holds it. The asker
        is notified (mentioned) unless `notify` is false (a later touch-up, the badge)."""
        await self._write(text, answer_id=answer_id, notify=notify, computed=True)
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
        """Redact what was shown of this reply; the next write starts a new message.
        An earlier run's message not taken over yet goes too: it may hold part of an
        answer computed for the earlier readers."""
        async with self._lock:
            shown = list(reversed(self.sent)) + ([self.earlier] if self.earlier else [])
            taken = self.event_id or self.earlier
            for event_id in shown:
                await self.matrix.redact(self.message.room_id, event_id, strings.TAKEN_BACK)
            self.sent.clear()
            self.event_id = self.earlier = None
            if self.in_inbox and taken is not None:
                # Kept, redacted: a later run finds it gone and replies anew, with
                # transaction ids of its own (never those of the message taken back).
                await self.state.record_reply(self.message.event_id, taken)

    async def _write(self, text: str, *, answer_id: str | None, notify: bool, computed: bool):
        async with self._lock:
            if computed and not self.still_holds():
                raise AudienceChanged(self.message.room_id)
            await self._show(text, answer_id=answer_id, notify=notify)

    async def _show(self, text: str, *, answer_id: str | None, notify: bool) -> None:
        """Under the lock: the reply's message is sent (or taken over) once, then edited."""
        if self.event_id is not None:
            await self._edit(self.event_id, text, answer_id, notify=notify)
        elif self.earlier is not None:
            await self._resume(self.earlier, text, answer_id=answer_id, notify=notify)
        else:
            self.event_id = await self._send(text, notify=notify, answer_id=answer_id)

    async def _resume(
        self, earlier: str, text: str, *, answer_id: str | None, notify: bool
    ) -> None:
        """Take over the earlier run's message by editing it; one that is gone (redacted)
        or that the homeserver will not let the bot edit is replaced by a new message,
        and the refused one, if it can still be edited, points to the new one."""
        room_id = self.message.room_id
        if await self.matrix.is_gone(room_id, earlier):
            log.info("the earlier reply %s in %s is gone; replying anew", earlier, room_id)
            self.event_id = await self._send(text, notify=notify, answer_id=answer_id)
            self.earlier = None
            return
        try:
            await self._edit(earlier, text, answer_id, notify=notify)
        except MatrixError as exc:
            log.warning("could not edit the earlier reply %s (%s); replying anew", earlier, exc)
            new = await self._send(text, notify=notify, answer_id=answer_id)
            self.event_id, self.earlier = new, None
            await self._point_to(earlier, new)
            return
        self.event_id, self.earlier = earlier, None
        self.sent.insert(0, earlier)
        if self.on_sent is not None:
            await self.on_sent(earlier)

    async def _point_to(self, earlier: str, new: str) -> None:
        """Best effort: the edit of `earlier` was refused once already."""
        room_id = self.message.room_id
        moved = strings.REPLY_MOVED.format(link=build_permalink(room_id, new, self.matrix.user_id))
        # Not one of this reply's edits (`sent`): taking the reply back must not undo it.
        try:
            await self.matrix.send(room_id, build_edit(earlier, moved))
        except SEND_ERRORS as exc:
            log.warning("the earlier reply %s could not point to %s: %s", earlier, new, exc)

    async def _edit(
        self, event_id: str, text: str, answer_id: str | None, *, notify: bool = False
    ) -> None:
        asker = self.message.sender if notify else None
        content = build_edit(event_id, text, answer_id=answer_id, notify=asker)
        self.sent.append(await self.matrix.send(self.message.room_id, content))

    async def _send(self, text: str, *, notify: bool, answer_id: str | None = None) -> str:
        content = build_notice(
            text,
            thread_root=self.thread_root,
            reply_to=self.message.replaces or self.message.event_id,
            notify=self.message.sender if notify else None,
            answer_id=answer_id,
        )
        event_id = await self.matrix.send(self.message.room_id, content, txn_id=self._txn_id())
        # The message is out: it is this reply's from now on, even if a shutdown cancels
        # the task while it is written down (a restart must find it, not send another).
        self.sent.append(event_id)
        self.event_id = event_id
        noting = asyncio.ensure_future(self._note_sent(event_id))
        self.bookkeeping.add(noting)
        noting.add_done_callback(self.bookkeeping.discard)
        await asyncio.shield(noting)
        return event_id

    def _txn_id(self) -> str | None:
        """The transaction id of the reply's next new message: the same for the same
        question, the same message it resumed, and the same count of new messages, so
        that a run that sent it but could not keep its id (a crash, a store that failed)
        sends it again as the same event (the homeserver answers a transaction id it
        knows with the event it made of it). Extra notices get none."""
        if not self.in_inbox:
            return None
        seed = f"{self.message.event_id}|{self.resumed_from or ''}|{self._new_messages}"
        self._new_messages += 1
        return "reply-" + hashlib.sha256(seed.encode()).hexdigest()[:32]

    async def _note_sent(self, event_id: str) -> None:
        await self.state.record_bot_message(event_id, self.message.room_id, self.thread_root)
        if self.in_inbox:
            await self.state.record_reply(self.message.event_id, event_id)
        if self.on_sent is not None:
            try:
                await self.on_sent(event_id)
            except StorageError as exc:
                # A help (votes on the answer): the answer is not asked again for it.
                log.warning("the reply %s was not noted for its votes: %s", event_id, exc)
