"""The facts a decision needs that the event alone cannot tell, gathered from the stores
and the account; the decision itself is bot/inbox/routing.py's pure `decide_event`."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Protocol

from bot.inbox.commands import decide_summary_command, decide_summary_request
from bot.inbox.decisions import Decision, RefuseDevice
from bot.inbox.events import (
    IncomingMessage,
    parse_message,
    parse_reaction,
    parse_redaction,
)
from bot.inbox.mentions import BotIdentity, strip_mention
from bot.inbox.routing import RoutingFacts, decide_event
from bot.inbox.state import PendingEvent, StateStore
from bot.matrix.account import MatrixAccount
from bot.matrix.types import SENDER_DEVICE
from bot.settings_holder import SettingsHolder
from core.ids import RoomID


class FeedbackFacts(Protocol):
    """What the feedback feature knows (bot/features/feedback); absent when it is off."""

    async def asked(self, room_id: str, thread_root: str | None, user: str) -> bool:
        """The bot asked this person in this thread what was wrong with an answer."""
        ...

    async def is_answer(self, room_id: str, event_id: str) -> bool: ...
    async def is_vote(self, room_id: str, event_id: str) -> bool:
        """The event is a vote on one of this room's answers."""
        ...


class Router:
    def __init__(
        self,
        matrix: MatrixAccount,
        state: StateStore,
        settings: SettingsHolder,
        bot: BotIdentity,
        first_start_ms: int,
        feedback: FeedbackFacts | None = None,
    ) -> None:
        self.matrix = matrix
        self.state = state
        self.settings = settings
        self.bot = bot
        self.first_start_ms = first_start_ms
        self.feedback = feedback
        # Voice messages are transcribed (a transcriber is wired).
        self.transcribes = False
        # Shared files are read and summarised (the files feature is wired).
        self.reads_files = False
        # Whether a room was upgraded into another (bot/features/upgrades).
        self.replaced: Callable[[str], bool] = lambda room_id: False
        # (room, device) told already that its messages are not acted on.
        self._told_devices: set[tuple[str, str]] = set()

    async def route(
        self, event: PendingEvent, received: Collection[str] = ()
    ) -> tuple[IncomingMessage | None, Decision]:
        """What to do with the event; `received`: messages of the same sync batch already
        addressed to the bot (not stored yet, so the store cannot tell)."""
        room_id = RoomID(event.room_id)
        message = parse_message(event.source, room_id)
        facts = (
            await self._facts(message, received, event.source.get(SENDER_DEVICE))
            if message is not None
            else await self._vote_facts(room_id, event.source)
        )
        room = self.settings.current.room(room_id)
        action = decide_event(event.source, room_id, self.bot, room, facts)
        if isinstance(action, RefuseDevice) and message is not None:
            self._told_devices.add((room_id, str(event.source.get(SENDER_DEVICE, ""))))
        return message, action

    async def _unverified_device(self, message: IncomingMessage, device: Any) -> str | None:
        """The device of an encrypted message (`device`, as the account found it) its
        owner never cross-signed, when `matrix.verified_devices_only` is on; else None."""
        if not self.settings.current.matrix.verified_devices_only:
            return None
        if not isinstance(device, str):
            room = self.matrix.room(message.room_id)
            if room is not None and room.encrypted:
                return ""  # no device known in an encrypted room: fails closed
            return None  # sent in the clear: no device to trust
        trusted = bool(device) and await self.matrix.device_trusted(message.sender, device)
        return None if trusted else str(device)

    async def _vote_facts(self, room_id: str, source: Mapping[str, Any]) -> RoutingFacts:
        """What a reaction or a redaction is to the feedback: a vote, or a vote taken back."""
        feedback = self.feedback
        if feedback is None:
            return RoutingFacts()
        reaction, redaction = parse_reaction(source), parse_redaction(source)
        return RoutingFacts(
            reacts_to_answer=reaction is not None
            and await feedback.is_answer(room_id, reaction.target),
            # A vote of this room's answers only: a redaction names its target by id alone.
            redacts_vote=(
                redaction is not None and await feedback.is_vote(room_id, redaction.redacts)
            ),
        )

    async def _facts(
        self, message: IncomingMessage, received: Collection[str] = (), device: Any = None
    ) -> RoutingFacts:
        bot_settings = self.settings.current.bot
        state, feedback = self.state, self.feedback
        unverified = await self._unverified_device(message, device)
        joined_ms, invited_as_direct = await state.joined_room(message.room_id)
        return RoutingFacts(
            not_before_ms=max(self.first_start_ms, joined_ms),
            replied_to_bot=await self._replied_to_bot(message),
            thread_has_bot=await self._thread_has_bot(message),
            is_direct=self._still_direct(message.room_id, invited_as_direct),
            ignored_users=frozenset(bot_settings.ignore_users),
            command_prefix=bot_settings.command_prefix,
            feedback_asked=feedback is not None
            and await feedback.asked(message.room_id, message.thread_root, message.sender),
            keeps_files=self.settings.current.room_files_collection() is not None,
            transcribes=self.transcribes,
            replied_file=await self._file_replied_for_summary(message) if self.reads_files else "",
            room_replaced=self.replaced(message.room_id),
            unverified_device=unverified is not None,
            device_told=(message.room_id, unverified) in self._told_devices,
            edited_was_addressed=bool(message.replaces)
            and (message.replaces in received or await state.was_received(message.replaces or "")),
        )

    async def _file_replied_for_summary(self, message: IncomingMessage) -> str:
        """The shared file a reply that asks for a summary (`!summarize`, "summarize
        this") replies to; "" for any other message. One request to the homeserver, for
        such replies only."""
        if not message.reply_to or message.sender == self.bot.user_id:
            return ""
        text = strip_mention(message.body, self.bot)
        prefix = self.settings.current.bot.command_prefix
        if not (decide_summary_request(text) or decide_summary_command(text, prefix)):
            return ""
        source = await self.matrix.fetch_event(message.room_id, message.reply_to)
        replied = parse_message(source, message.room_id) if source else None
        # A file (not a photo or a video: "tl;dr?" replying to one is for the people
        # who shared it).
        return message.reply_to if replied is not None and replied.msgtype == "m.file" else ""

    async def _replied_to_bot(self, message: IncomingMessage) -> bool:
        return bool(message.reply_to) and await self.state.is_bot_message(message.reply_to or "")

    async def _thread_has_bot(self, message: IncomingMessage) -> bool:
        return bool(message.thread_root) and await self.state.bot_in_thread(
            message.room_id, message.thread_root or ""
        )

    async def not_before_ms(self, room_id: str) -> int:
        """Messages older than the bot's first start, or its joining the room, are not its."""
        joined_ms, _ = await self.state.joined_room(room_id)
        return max(self.first_start_ms, joined_ms)

    def _still_direct(self, room_id: str, invited_as_direct: bool) -> bool:
        """A chat the bot was invited to as direct, still with only one other person."""
        room = self.matrix.room(room_id)
        return invited_as_direct and room is not None and room.member_count <= 2
