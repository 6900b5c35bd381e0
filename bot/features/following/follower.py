"""What people do to their messages after the fact, followed everywhere the bot keeps
text of them: an edit by its sender, or a redaction, reaches the conversation feed, the
room's history and memories, the ledger and the summaries that quote it; a redaction
also the inbox, the conversation turns and the feedback records (question, comments).

Runs as the inbox's work (FollowEdit, FollowRedaction in bot/inbox/decisions.py); nothing that
came after a redaction is started before it was followed (bot/inbox/workers.py), so that
nothing redacted is reused after its redaction arrived. A store that fails leaves the
event pending, to be followed again; anything else is logged and the rest still
follows: one dependency must not keep the others from forgetting.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from bot.features.answers.feed import Feed
from bot.features.summaries.desk import SummaryDesk
from bot.inbox.decisions import FollowEdit, FollowRedaction
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.events import IncomingMessage
from bot.inbox.mentions import strip_reply_fallback
from bot.inbox.state import PendingEvent, StateStore
from bot.matrix.account import MatrixAccount
from core.feedback.store import FeedbackStore
from core.memory.memory import ConversationMemory
from core.storage.database import StorageError

log = logging.getLogger(__name__)
Spawn = Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]]


async def _step(what: str, work: Awaitable[object]) -> None:
    try:
        await work
    except StorageError:
        raise
    except Exception:
        log.exception("following a changed message: %s failed", what)


class MessageFollower:
    def __init__(
        self,
        matrix: MatrixAccount,
        state: StateStore,
        feed: Feed,
        memory: ConversationMemory | None,
        summaries: SummaryDesk | None,
        spawn: Spawn,
        feedback: FeedbackStore | None = None,
        history_settled: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.matrix = matrix
        self.state = state
        self.feedback = feedback
        self.feed = feed
        self.memory = memory
        self.summaries = summaries
        self.spawn = spawn
        # Waits until the lines before an edit or a redaction are in the history.
        self.history_settled = history_settled
        # Other features' parts that forget a redacted message (room, event id).
        self.forgetters: list[Callable[[str, str], Awaitable[None]]] = []

    def register(self, dispatcher: Dispatcher) -> None:
        """The kinds of event this feature handles: edits and redactions to follow."""
        dispatcher.on_work(FollowEdit, self.edited)
        dispatcher.on_work(FollowRedaction, self.redacted)
        dispatcher.follow_edit = self.follow_edit

    async def edited(
        self, event: PendingEvent, message: IncomingMessage | None, action: FollowEdit
    ) -> None:
        """The inbox's FollowEdit."""
        if message is not None:
            await self.follow_edit(message)

    async def redacted(self, event: PendingEvent, message: object, action: FollowRedaction) -> None:
        """The inbox's FollowRedaction."""
        await self.follow_redaction(event.room_id, action.redacts)

    async def follow_edit(self, message: IncomingMessage) -> None:
        """An edit by the message's sender: its new text everywhere (a summary or an
        answer reads it as it is now)."""
        if not message.replaces or message.msgtype not in ("m.text", "m.emote"):
            return
        room, original = message.room_id, message.replaces
        text = strip_reply_fallback(message.body).strip()
        self.feed.follow(room, original, message.sender, text)
        edit = message.event_id
        if self.memory is not None:
            await self._settled()
            await _step(
                "history", self.memory.follow_edit(room, original, message.sender, text, edit)
            )
        if self.summaries is not None and await self._sent_by(message):
            await _step("ledger", self.summaries.ledger.follow_edit(room, original, text, edit))

    async def follow_redaction(self, room_id: str, event_id: str) -> None:
        """A redacted message leaves the conversation, the room's history windows, the
        memories and ledger entries made from it, and the summaries that quote it or
        cover when it was said."""
        self.feed.follow(room_id, event_id, "", None)
        # Each store looks the target up in this room: a redaction names its target by
        # id alone, and one in another room (a buggy bridge, a lying homeserver) must
        # remove nothing there.
        await self.state.forget_message(room_id, event_id)
        if self.feedback is not None:
            await self.feedback.forget_event(room_id, event_id)
        said = await self._said_at(room_id, event_id)
        if self.memory is not None:
            await self._settled()
            await _step("history", self.memory.follow_redaction(room_id, event_id, said))
        try:
            for forget in self.forgetters:
                await forget(room_id, event_id)
            await self._follow_in_summaries(room_id, event_id, said)
        finally:
            await self._erase_freed()

    async def _settled(self) -> None:
        if self.history_settled is not None:
            await self.history_settled()

    async def _follow_in_summaries(self, room_id: str, event_id: str, said: float | None) -> None:
        if self.summaries is None:
            return
        await _step("ledger", self.summaries.ledger.forget_event(room_id, event_id))
        self.summaries.note_redaction(room_id, event_id)
        try:
            removed = await self.summaries.forget_quoting(room_id, event_id, said)
        except StorageError:
            raise
        except Exception:
            log.exception("the summaries quoting a redacted message of %s stay", room_id)
            return
        if removed:
            # Summarising again reads the homeserver (and the model): not in the sync.
            self.spawn(self._rebuild(room_id, removed))

    async def _erase_freed(self) -> None:
        """No copy of the removed text left in the stores' files (SQLite's journal)."""
        await self.state.erase_freed()
        if self.feedback is not None:
            await self.feedback.erase_freed()
        if self.memory is not None:
            await self.memory.store.erase_freed()
        if self.summaries is not None:
            await self.summaries.ledger.erase_freed()
            if self.summaries.indexer is not None:
                await self.summaries.indexer.catalog.erase_freed()

    async def _said_at(self, room_id: str, event_id: str) -> float | None:
        """When a (redacted) message was sent: the homeserver keeps that much of it."""
        event = await self.matrix.fetch_event(room_id, event_id)
        ts = event.get("origin_server_ts") if event else None
        return ts / 1000 if isinstance(ts, int) else None

    async def _sent_by(self, edit: IncomingMessage) -> bool:
        """Whether an edit is by the sender of the message it edits (others' are void)."""
        original = await self.matrix.fetch_event(edit.room_id, edit.replaces or "")
        return original is not None and original.get("sender") == edit.sender

    async def _rebuild(self, room_id: str, doc_ids: list[str]) -> None:
        assert self.summaries is not None
        try:
            await self.summaries.rebuild(room_id, doc_ids)
        except Exception:
            # The summaries are gone already; a later scheduled run covers new messages.
            log.exception("summaries of %s could not be made again", room_id)
