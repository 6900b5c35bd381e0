"""Carries out routing decisions: all Matrix and core I/O for one addressed message."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Collection, Coroutine, Mapping
from dataclasses import replace
from typing import Any

from bot.audience import AudienceChanged, Audiences
from bot.desks import Desks
from bot.events import IncomingMessage, parse_message, parse_reaction, parse_redaction
from bot.feed import Feed, FeedLine
from bot.following import MessageFollower
from bot.links import build_permalink
from bot.logs import ANSWER_ID
from bot.matrix.account import SEND_ERRORS, MatrixAccount, typing_while
from bot.matrix.types import ReadReceipt, WriteRefused
from bot.mentions import BotIdentity, strip_reply_fallback
from bot.render import build_answer_markdown
from bot.reply import ReplyWriter
from bot.routing import (
    Action,
    Actionable,
    AnswerQuestion,
    ExplainCommand,
    FollowEdit,
    FollowRedaction,
    KeepFeedback,
    KeepVote,
    RoutingFacts,
    RunCommand,
    decide_event,
    decode_action,
)
from bot.settings_holder import SettingsHolder
from bot.state import PendingEvent, StateStore
from core import strings
from core.answering import Answerer
from core.ids import AnswerID, EventID, RoomID, UserID
from core.knowledge.vectors import KnowledgeUnavailable
from core.llm.client import LlmError
from core.pipeline.failures import build_failure_notice, failure_cause
from core.requests import Answer, ChatLine, Request
from core.storage.database import StorageError

log = logging.getLogger(__name__)

# How often an answer is started again because new readers came in while it was written.
AUDIENCE_ATTEMPTS = 3


class Dispatcher:
    def __init__(
        self,
        matrix: MatrixAccount,
        state: StateStore,
        answerer: Answerer,
        settings: SettingsHolder,
        bot: BotIdentity,
        desks: Desks | None,
        audiences: Audiences,
        first_start_ms: int,
    ) -> None:
        self.matrix = matrix
        self.desks = desks or Desks()
        self.memory = self.desks.memory
        self.feedback = self.desks.feedback
        self.metrics = self.desks.metrics
        self.state = state
        self.answerer = answerer
        self.settings = settings
        self.bot = bot
        self.feed = Feed()
        self.follower = MessageFollower(
            matrix, state, self.feed, self.memory, self.desks.summaries, self._spawn,
            self.feedback.store if self.feedback else None,
        )  # fmt: skip
        self.audiences = audiences
        self.first_start_ms = first_start_ms
        self._tasks: set[asyncio.Task[None]] = set()
        # Records of sent replies still being written (shielded from cancellation).
        self._bookkeeping: set[asyncio.Task[None]] = set()
        # The inbox's messages being handled now.
        self._handling: set[str] = set()

    async def route(
        self, event: PendingEvent, received: Collection[str] = ()
    ) -> tuple[IncomingMessage | None, Action]:
        """What to do with the event; `received`: messages of the same sync batch already
        addressed to the bot (not stored yet, so the store cannot tell)."""
        room_id = RoomID(event.room_id)
        message = parse_message(event.source, room_id)
        facts = (
            await self._facts(message, received)
            if message is not None
            else await self._vote_facts(event.source)
        )
        room = self.settings.current.room(room_id)
        return message, decide_event(event.source, room_id, self.bot, room, facts)

    async def _vote_facts(self, source: Mapping[str, Any]) -> RoutingFacts:
        """What a reaction or a redaction is to the feedback: a vote, or a vote taken back."""
        feedback = self.feedback
        if feedback is None:
            return RoutingFacts()
        reaction, redaction = parse_reaction(source), parse_redaction(source)
        return RoutingFacts(
            reacts_to_answer=reaction is not None
            and await feedback.store.answer_of_event(reaction.target) is not None,
            redacts_vote=redaction is not None
            and await feedback.store.is_reaction(redaction.redacts),
        )

    async def _facts(
        self, message: IncomingMessage, received: Collection[str] = ()
    ) -> RoutingFacts:
        bot_settings = self.settings.current.bot
        state, feedback = self.state, self.feedback
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
            edited_was_addressed=bool(message.replaces)
            and (message.replaces in received or await state.was_received(message.replaces or "")),
        )

    async def _replied_to_bot(self, message: IncomingMessage) -> bool:
        return bool(message.reply_to) and await self.state.is_bot_message(message.reply_to or "")

    async def _thread_has_bot(self, message: IncomingMessage) -> bool:
        return bool(message.thread_root) and await self.state.bot_in_thread(
            message.room_id, message.thread_root or ""
        )

    async def _not_before_ms(self, room_id: str) -> int:
        """Messages older than the bot's first start, or its joining the room, are not its."""
        joined_ms, _ = await self.state.joined_room(room_id)
        return max(self.first_start_ms, joined_ms)

    async def _is_direct(self, room_id: str) -> bool:
        _, invited_as_direct = await self.state.joined_room(room_id)
        return self._still_direct(room_id, invited_as_direct)

    def _still_direct(self, room_id: str, invited_as_direct: bool) -> bool:
        """A chat the bot was invited to as direct, still with only one other person."""
        room = self.matrix.room(room_id)
        return invited_as_direct and room is not None and room.member_count <= 2

    async def observe(self, message: IncomingMessage, addressed: bool = False) -> None:
        """Keep a room's messages as context, leaving out the bot's own messages, commands
        to it, and the quotes that older clients put before a reply (the quoted answer
        would otherwise come back in every later prompt and history search). Messages
        `addressed` to the bot are context for the conversation, not the room's history:
        a history search must not quote an asker's questions back as discussion."""
        if message.sender == self.bot.user_id or message.is_edit:
            return  # an edit is followed as the inbox's work (FollowEdit)
        if message.msgtype in ("m.text", "m.emote"):
            message = replace(message, body=strip_reply_fallback(message.body).strip())
            if message.body.startswith(self.settings.current.bot.command_prefix):
                return  # a command to the bot is no part of the discussion
            line = ChatLine(message.sender, message.body)
            entry = FeedLine(message.event_id, line, message.timestamp_ms / 1000)
            self.feed.add(message.room_id, message.thread_root, entry)
            if addressed or not self.memory:
                return
            if message.timestamp_ms >= await self._not_before_ms(message.room_id):
                self._spawn(self._remember_line(message))

    async def note_receipts(self, receipts: list[ReadReceipt]) -> None:
        """Where people last read each room, for their catch-ups (a help: a store that
        fails loses these receipts, not the sync)."""
        if self.desks.catchup is not None:
            try:
                await self.desks.catchup.receipts.store_receipts(receipts)
            except StorageError as exc:
                log.warning("read receipts were not kept: %s", exc)

    async def _remember_line(self, message: IncomingMessage) -> None:
        assert self.memory is not None
        try:
            await self.memory.observe(
                message.room_id,
                message.event_id,
                message.sender,
                message.body,
                message.timestamp_ms / 1000,
                build_permalink(message.room_id, message.event_id, message.sender),
            )
        except Exception:
            # History is a help, never a reason to miss a message: log and go on.
            log.exception("could not add a line of %s to its history", message.room_id)

    async def run(self, event: PendingEvent) -> bool:
        """Handle one stored message as a task of its own, which a shutdown leaves its
        grace period to finish even when the worker that started it stops (see drain).
        False when it stays pending (the store failed) and must be taken again."""
        event_id = str(event.source.get("event_id", ""))
        if event_id in self._handling:
            return True  # still being answered since before the workers started again
        self._handling.add(event_id)
        task = self._spawn(self.handle(event))
        task.add_done_callback(lambda _: self._handling.discard(event_id))
        try:
            await asyncio.shield(task)
        except StorageError as exc:
            log.warning("message %s stays pending: %s", event_id, exc)
            return False
        return True

    async def _stored_action(self, event: PendingEvent) -> tuple[IncomingMessage | None, Action]:
        """The decision stored with the message at sync time; decided now for messages
        an earlier release stored without one."""
        action = decode_action(event.decision) if event.decision is not None else None
        if action is None:
            return await self.route(event)
        return parse_message(event.source, RoomID(event.room_id)), action

    async def drain(self, grace_seconds: float = 0.0) -> None:
        """On shutdown: answers in flight get `grace_seconds` to finish; the rest are
        cancelled with a notice, and stay pending, so they are answered after a restart."""
        if self._tasks and grace_seconds > 0:
            await asyncio.wait(list(self._tasks), timeout=grace_seconds)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        # Before the stores close: a restart must find every reply that was sent.
        await asyncio.gather(*self._bookkeeping, return_exceptions=True)

    async def handle(self, event: PendingEvent) -> None:
        """Carry out one stored event's decision. A store that fails leaves it pending
        (StorageError, see `run`); it is marked done otherwise."""
        message, action = await self._stored_action(event)
        if isinstance(action, KeepVote):
            await self._feedback_event(event)
        elif isinstance(action, FollowRedaction):
            await self.follower.follow_redaction(event.room_id, action.redacts)
        elif isinstance(action, FollowEdit) and message is not None:
            await self.follower.follow_edit(message)
        elif message is not None and isinstance(action, Actionable):
            await self._reply_to(event, message, action)
            return
        await self.state.mark_done(event.source.get("event_id", ""))

    async def _reply_to(
        self, event: PendingEvent, message: IncomingMessage, action: Actionable
    ) -> None:
        """Answer a question or a command; the single catch-all for replies."""
        if message.is_edit:
            await self.follower.follow_edit(message)  # an edit asked anew: its text changed
        # The reply kept with the message in the inbox; after a restart, in the same message.
        reply = self._reply(message, action.thread_root, resume_from=event.reply_event_id)
        ANSWER_ID.set(uuid.uuid4().hex)
        try:
            await self._act_for_readers(reply, action)
        except asyncio.CancelledError:
            # Shutting down: say so; the message stays pending for after the restart.
            await self._tell_failure(reply, strings.INTERRUPTED)
            raise
        except LlmError as exc:
            log.warning("the language model failed for %s: %s (see %s)", message.event_id, exc,
                        exc.setting)  # fmt: skip
            self._count_failure(failure_cause(exc))
            # What an incomplete answer wrote so far was computed for the readers as they
            # were: it is shown (quoted, no answer id) only while they are all who read.
            notice = build_failure_notice(exc, show_partial=reply.still_holds())
            await self._tell_failure(reply, notice)
        except KnowledgeUnavailable as exc:
            log.warning("the documents could not be searched for %s: %s", message.event_id, exc)
            self._count_failure("knowledge_unavailable")
            await self._tell_failure(reply, strings.SEARCH_UNAVAILABLE)
        except Exception as exc:
            if isinstance(exc, WriteRefused) and not self.matrix.may_send():
                log.warning("message %s stays pending: %s", message.event_id, exc)
                return
            reference = uuid.uuid4().hex[:8]
            log.exception("answering %s failed (reference %s)", message.event_id, reference)
            self._count_failure("error")
            await self._tell_failure(reply, strings.ANSWER_FAILED.format(reference=reference))
        if not self.matrix.may_send():
            # Whatever was or was not written, the process that holds the lease now
            # finishes the reply (it resumes the message kept with the question).
            log.warning("message %s stays pending: the lease was lost", message.event_id)
            return
        await self.state.mark_done(message.event_id)

    def _reply(
        self, message: IncomingMessage, thread_root: str, *, resume_from: str | None = None
    ) -> ReplyWriter:
        """The reply to `message`, computed for the room's readers as they are now."""
        edit_seconds = self.settings.current.pipeline.stream_edit_seconds
        return ReplyWriter(
            self.matrix, self.state, message, thread_root, edit_seconds,
            self.audiences.of_room(message.room_id), self.audiences.holds,
            in_inbox=True, resume_from=resume_from, bookkeeping=self._bookkeeping,
        )  # fmt: skip

    def _notice(self, message: IncomingMessage, thread_root: str) -> ReplyWriter:
        """An extra notice about `message`, not its reply (not kept in the inbox)."""
        edit_seconds = self.settings.current.pipeline.stream_edit_seconds
        return ReplyWriter(
            self.matrix, self.state, message, thread_root, edit_seconds,
            bookkeeping=self._bookkeeping,
        )  # fmt: skip

    async def _act_for_readers(self, reply: ReplyWriter, action: Actionable) -> None:
        """Act for the room's readers. When someone new can read the room before the
        reply is complete, what was shown is taken back (with shared history they could
        scroll to it), the room is told, and the work starts again for everyone now there."""
        room_id = reply.message.room_id
        for _ in range(AUDIENCE_ATTEMPTS):
            try:
                await self._act(reply, action)
                return
            except AudienceChanged:
                log.info("new readers in %s while answering; answering again", room_id)
                await reply.take_back()
                await self._notice(reply.message, reply.thread_root).finish_fixed(
                    strings.AUDIENCE_CHANGED
                )
                reply.audience = self.audiences.of_room(room_id)
        await reply.finish_fixed(strings.AUDIENCE_UNSTABLE)

    async def _act(self, reply: ReplyWriter, action: Actionable) -> None:
        if isinstance(action, RunCommand | ExplainCommand):
            await self._run_command(reply, action)
        elif isinstance(action, KeepFeedback):
            assert self.feedback is not None
            await self.feedback.keep_comment(reply, action)
        else:
            await self._answer(reply, action)

    def _count_failure(self, cause: str) -> None:
        if self.metrics is not None:
            self.metrics.failures.labels(cause).inc()

    async def _feedback_event(self, event: PendingEvent) -> None:
        """A vote or its removal; the catch-all of this entry point. A store that
        fails leaves the vote pending, taken again shortly (see AnswerWorkers)."""
        if self.feedback is None:
            return  # feedback was turned off since the vote came
        try:
            await self.feedback.handle(event.room_id, event.source)
        except StorageError:
            raise
        except Exception:
            log.exception("feedback event %s was not recorded", event.source.get("event_id"))

    async def _tell_failure(self, reply: ReplyWriter, text: str) -> None:
        """The failure notice in place of the reply. It is no answer, so reactions on it are
        no votes; what was shown of the reply goes if new readers came in meanwhile."""
        try:
            if not reply.still_holds():
                await reply.take_back()
            await reply.finish_fixed(text)
            if self.feedback is not None and reply.event_id:
                await self.feedback.store.forget_answer_event(reply.event_id)
        except SEND_ERRORS:
            log.warning("could not tell the asker about a failure in %s", reply.message.room_id)

    async def _run_command(self, reply: ReplyWriter, action: RunCommand | ExplainCommand) -> None:
        is_direct = await self._is_direct(reply.message.room_id)
        await self.desks.run_command(reply, action, self.settings.current, is_direct)

    async def _request(self, message: IncomingMessage, text: str, reply: ReplyWriter) -> Request:
        audience = reply.audience
        assert audience is not None
        # Only the facts the request needs (the decision itself was stored at sync time).
        in_bot_conversation = await self._replied_to_bot(message) or await self._thread_has_bot(
            message
        )
        return Request(
            text=text,
            sender=UserID(message.sender),
            room=RoomID(message.room_id),
            thread=EventID(message.thread_root) if message.thread_root else None,
            recent=self.feed.recent(
                message.room_id,
                message.thread_root,
                self.settings.current.bot.recent_messages,
                before=message.event_id,
                readers=audience.readers,
                since=audience.own_since(),
            ),
            is_direct=await self._is_direct(message.room_id),
            readers=tuple(sorted(audience.readers)),
            knowledge=audience.knowledge,
            plaintext_only=audience.plaintext_only,
            open_room=audience.open_room,
            event=message.event_id,
            in_bot_conversation=in_bot_conversation,
        )

    async def _placeholder_unless_quick(self, work: asyncio.Future, reply: ReplyWriter) -> None:
        try:
            await asyncio.wait_for(
                asyncio.shield(work), timeout=self.settings.current.bot.placeholder_after_seconds
            )
        except TimeoutError:
            await reply.placeholder()

    async def _answer(self, reply: ReplyWriter, action: AnswerQuestion) -> None:
        message = reply.message
        request = await self._request(message, action.text, reply)
        if self.feedback is not None:
            feedback, answer_id = self.feedback, ANSWER_ID.get()
            reply.on_sent = lambda event_id: feedback.store.note_answer_event(event_id, answer_id)
        async with typing_while(self.matrix, message.room_id):
            work = asyncio.ensure_future(self.answerer.answer(request, reply.progress))
            try:
                await self._placeholder_unless_quick(work, reply)
            except BaseException:
                work.cancel()  # cancelled (a shutdown), or the placeholder failed
                raise
            answer = replace(await work, id=AnswerID(ANSWER_ID.get()))
        if self.metrics is not None:
            self.metrics.observe_answer(answer)
        text = build_answer_markdown(answer)
        event_id = await reply.finish(text, answer_id=answer.id)
        if await self.state.was_redacted(message.event_id):
            # Redacted while it was answered: what the answer kept of it goes too.
            if self.memory is not None:
                await self.memory.store.forget_turns_of(message.room_id, message.event_id)
            return
        if self.feedback is not None:
            await self.feedback.record(request, answer, event_id, text)
        line = ChatLine(UserID(self.bot.user_id), text, from_bot=True)
        readers = reply.audience.readers if reply.audience else frozenset()
        entry = FeedLine(answer.id, line, time.time(), readers)
        self.feed.add(message.room_id, action.thread_root, entry)
        if answer.followup:
            self._spawn(self._add_badge(reply, event_id, text, answer))

    async def _add_badge(
        self, reply: ReplyWriter, event_id: str, text: str, answer: Answer
    ) -> None:
        """After the answer is shown: the support check's badge, edited in."""
        assert answer.followup is not None
        try:
            badge = await answer.followup()
            if badge:
                await reply.finish(f"{text}\n\n{badge}", answer_id=answer.id, notify=False)
        except AudienceChanged:
            log.info("no support badge for %s: new readers in the room", event_id)
        except (LlmError, *SEND_ERRORS) as exc:
            log.warning("the support badge for %s was not added: %s", event_id, exc)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
