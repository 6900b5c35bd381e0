"""What every feature of the bot is: one life-cycle, so that adding a feature touches its
own folder and the list in bot/runtime/wiring.py, nothing else.

A feature registers the kinds of decision it carries out (bot/inbox/decisions.py) with
the dispatcher; it may keep what it needs of the bot's answers (feedback keeps them for
votes); if it keeps text of the rooms' messages, it follows edits and redactions
of them (bot/features/following calls every feature), drops what a room's retention no
longer allows (bot/runtime/retention.py), and leaves no copy of removed text in its
stores' files. Each hook does nothing unless the feature overrides it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.inbox.dispatcher import Dispatcher
from core.ids import AnswerID, EventID, RoomID, UserID
from core.requests import Answer, Request


@dataclass(frozen=True)
class FollowedEdit:
    """An edit of a room's text message, as every feature follows it."""

    room_id: RoomID
    original: EventID  # the edited message
    sender: UserID  # who sent the edit
    text: str  # the new text
    edit_event: EventID
    # Whether the edit's sender sent the message it edits (others' edits are void where
    # the original's author counts): asked of the homeserver once, by the first feature
    # that needs to know.
    by_author: Callable[[], Awaitable[bool]]


class Feature:
    """The hooks of a feature's life-cycle; override those the feature needs."""

    def register(self, dispatcher: Dispatcher) -> None:
        """Register the kinds of decision this feature carries out."""

    async def follow_edit(self, edit: FollowedEdit) -> None:
        """The new text of an edited message wherever this feature keeps the old."""

    async def forget_message(
        self, room_id: RoomID, event_id: EventID, said_at: float | None
    ) -> None:
        """A redacted message (sent at `said_at`, when known) leaves this feature's stores.
        Raise StorageError to have the redaction followed again later."""

    async def answer_posted(self, event_id: EventID, answer_id: AnswerID) -> None:
        """A message of an answer is in the room (it may still be written into)."""

    async def answer_finished(
        self, request: Request, answer: Answer, event_id: EventID, text: str
    ) -> None:
        """An answer is complete in the room, as `text`. Raise StorageError when it could
        not be kept: the answer is out, and is not asked again for it."""

    async def purge_room_before(self, room_id: RoomID, cutoff: float) -> None:
        """The room's `m.room.retention`: what was said before `cutoff` goes."""

    async def purge_expired(self) -> None:
        """What this feature's own settings keep no longer (run with the retention)."""

    async def erase_freed(self) -> None:
        """No copy of removed text left in this feature's stores' files."""
