"""What people do to their messages after the fact, followed everywhere the bot keeps
text of them: an edit, or a redaction, reaches the conversation feed and the inbox here,
and every feature's stores through its life-cycle hooks (bot/features/feature.py): the
room's history and memories, the ledger and the summaries that quote it, the feedback
records (question, comments), shared files, voice transcripts.

Runs as the inbox's work (FollowEdit, FollowRedaction in bot/inbox/decisions.py); nothing that
came after a redaction is started before it was followed (bot/inbox/workers.py), so that
nothing redacted is reused after its redaction arrived. A store that fails leaves the
event pending, to be followed again; anything else is logged and the rest still
follows: one dependency must not keep the others from forgetting.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable

from bot.features.answers.feed import Feed
from bot.features.feature import Feature, FollowedEdit
from bot.inbox.decisions import FollowEdit, FollowRedaction
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.events import IncomingMessage
from bot.inbox.mentions import strip_reply_fallback
from bot.inbox.state import PendingEvent, StateStore
from bot.matrix.account import MatrixAccount
from core.ids import EventID, RoomID
from core.knowledge.search.vectors import KnowledgeUnavailable
from core.storage.database import StorageError

log = logging.getLogger(__name__)


async def _step(what: str, work: Awaitable[object]) -> None:
    try:
        await work
    except (StorageError, KnowledgeUnavailable):
        raise  # an outage: the event stays pending and is followed again
    except Exception:
        log.exception("following a changed message: %s failed", what)


class MessageFollower(Feature):
    def __init__(self, matrix: MatrixAccount, state: StateStore, feed: Feed) -> None:
        self.matrix = matrix
        self.state = state
        self.feed = feed
        # Every feature of the process, this one aside (set by bot/runtime/wiring.py).
        self.features: list[Feature] = []

    def register(self, dispatcher: Dispatcher) -> None:
        """The kinds of event this feature handles: edits and redactions to follow."""
        dispatcher.on_work(FollowEdit, self.edited)
        dispatcher.on_work(FollowRedaction, self.redacted)
        dispatcher.follow_edit = self.follow_message_edit

    async def edited(
        self, event: PendingEvent, message: IncomingMessage | None, action: FollowEdit
    ) -> None:
        """The inbox's FollowEdit."""
        if message is not None:
            await self.follow_message_edit(message)

    async def redacted(self, event: PendingEvent, message: object, action: FollowRedaction) -> None:
        """The inbox's FollowRedaction."""
        await self.follow_redaction(event.room_id, action.redacts)

    async def follow_message_edit(self, message: IncomingMessage) -> None:
        """An edit by the message's sender: its new text everywhere (a summary or an
        answer reads it as it is now)."""
        if not message.replaces or message.msgtype not in ("m.text", "m.emote"):
            return
        room, original = message.room_id, message.replaces
        text = strip_reply_fallback(message.body).strip()
        self.feed.follow(room, original, message.sender, text)
        by_author: list[bool] = []

        async def sent_by_author() -> bool:
            if not by_author:
                by_author.append(await self._sent_by(message))
            return by_author[0]

        edit = FollowedEdit(
            RoomID(room), original, message.sender, text, message.event_id, sent_by_author
        )
        for feature in self.features:
            await _step(type(feature).__name__, feature.follow_edit(edit))

    async def follow_redaction(self, room_id: str, event_id: str) -> None:
        """A redacted message leaves the conversation, the inbox and every feature's
        stores (the room's history windows, the memories and ledger entries made from it,
        the summaries that quote it or cover when it was said, ...)."""
        self.feed.follow(room_id, event_id, "", None)
        # Each store looks the target up in this room: a redaction names its target by
        # id alone, and one in another room (a buggy bridge, a lying homeserver) must
        # remove nothing there.
        await self.state.forget_message(room_id, event_id)
        said = await self._said_at(room_id, event_id)
        try:
            for feature in self.features:
                await _step(
                    type(feature).__name__,
                    feature.forget_message(RoomID(room_id), EventID(event_id), said),
                )
        finally:
            # No copy of the removed text left in the stores' files (SQLite's journal).
            await self.state.erase_freed()
            for feature in self.features:
                await feature.erase_freed()

    async def _said_at(self, room_id: str, event_id: str) -> float | None:
        """When a (redacted) message was sent: the homeserver keeps that much of it."""
        event = await self.matrix.fetch_event(room_id, event_id)
        ts = event.get("origin_server_ts") if event else None
        return ts / 1000 if isinstance(ts, int) else None

    async def _sent_by(self, edit: IncomingMessage) -> bool:
        """Whether an edit is by the sender of the message it edits (others' are void)."""
        original = await self.matrix.fetch_event(edit.room_id, edit.replaces or "")
        return original is not None and original.get("sender") == edit.sender
