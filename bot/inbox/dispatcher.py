"""Carries out the inbox's stored decisions, one event at a time, through the handlers
the features registered (each feature's `register`; the list is in bot/runtime/wiring.py):
a reply handler for what is answered in the room (a question, a command, the comment
after a 👎), a work handler for what is only kept or followed (a vote, an edit, a
redaction). Which of the two a decision is, is one exhaustive match
(bot/inbox/decisions.py's `decide_handling`); a reply no feature handles (the feature
is turned off) is answered so, never dropped.

Replies share one catch-all here: a failure is told in the reply's place with a
reference for the logs, a shutdown leaves the event pending with a notice, new readers
start the reply again, and a lost lease leaves it to the process that holds it now.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from bot.inbox.audience import AudienceChanged, Audiences
from bot.inbox.command_guard import CommandGuard
from bot.inbox.decisions import (
    Actionable,
    Answered,
    Bookkeeping,
    Command,
    Decision,
    decide_handling,
    decode_decision,
)
from bot.inbox.events import IncomingMessage, parse_message
from bot.inbox.language import ReplyLanguages
from bot.inbox.reply import ReplyHandler, ReplyWriter
from bot.inbox.router import Router
from bot.inbox.state import PendingEvent, StateStore
from bot.logs import ANSWER_ID
from bot.matrix.account import SEND_ERRORS, MatrixAccount, may_send
from bot.matrix.types import WriteRefused
from bot.settings_holder import SettingsHolder
from core import strings
from core.guardrails.rate_store import LocalRateLimits, RateLimits
from core.i18n.detection import LanguageFinder
from core.i18n.language import LANGUAGE
from core.ids import RoomID
from core.knowledge.search.vectors import KnowledgeUnavailable
from core.llm.client import LlmError
from core.metrics import Metrics
from core.pipeline.failures import build_failure_notice, failure_cause
from core.storage.database import StorageError

log = logging.getLogger(__name__)
# Between tries of background work whose store failed.
BACKGROUND_RETRY_SECONDS = 5

# How often an answer is started again because new readers came in while it was written.
AUDIENCE_ATTEMPTS = 3

Spawn = Callable[[Coroutine[Any, Any, None]], "asyncio.Task[None]"]
R = TypeVar("R", bound=Answered)
C = TypeVar("C", bound=Command)
W = TypeVar("W", bound=Bookkeeping)
# Keeps or follows what the event says; it has no reply.
WorkHandler = Callable[[PendingEvent, IncomingMessage | None, W], Awaitable[None]]


class Dispatcher:
    def __init__(
        self,
        matrix: MatrixAccount,
        state: StateStore,
        settings: SettingsHolder,
        audiences: Audiences,
        router: Router,
        metrics: Metrics | None = None,
        languages: LanguageFinder | None = None,
        limits: RateLimits | None = None,
    ) -> None:
        self.matrix = matrix
        self.languages = ReplyLanguages(settings, languages, router.bot)
        self.state = state
        self.settings = settings
        self.audiences = audiences
        self.router = router
        self.metrics = metrics
        # Shared with the questions' guardrails; in this process's memory when not given.
        self.commands = CommandGuard(settings, limits or LocalRateLimits())
        self._replies: dict[type, ReplyHandler[Any]] = {}
        self._work: dict[type, WorkHandler[Any]] = {}
        # The kinds (by name, as stored) handled in the background (see on_work).
        self._background: set[str] = set()
        self.background_retry_seconds: float = BACKGROUND_RETRY_SECONDS
        # Called with a reply's message when it is an edit asked anew.
        self.follow_edit: Callable[[IncomingMessage], Awaitable[None]] | None = None
        # Called with the event id of a reply that a failure notice replaced.
        self.after_failure: list[Callable[[str], Awaitable[None]]] = []
        self._tasks: set[asyncio.Task[None]] = set()
        # Records of sent replies still being written (shielded from cancellation).
        self._bookkeeping: set[asyncio.Task[None]] = set()
        # The inbox's messages being handled now.
        self._handling: set[str] = set()

    def on_reply(self, kind: type[R], handler: ReplyHandler[R]) -> None:
        """`handler` writes the reply to events decided as `kind` (a command registers
        with `on_command`, which the commands' guard wraps)."""
        self._replies[kind] = handler

    def on_command(
        self, kind: type[C], handler: ReplyHandler[C], *, asks_model: bool = False
    ) -> None:
        """`handler` runs the command decided as `kind`, while the room allows commands;
        one that `asks_model` counts against the questions' rate limits."""
        self._replies[kind] = self.commands.guard(handler, asks_model=asks_model)

    def on_work(self, kind: type[W], handler: WorkHandler[W], *, background: bool = False) -> None:
        """`handler` carries out events decided as `kind`; in the `background`, work that
        takes long (reading a shared file) leaves its worker free for the next events at
        once, and stays pending until done (a restart does it again)."""
        self._work[kind] = handler
        if background:
            self._background.add(kind.__name__)

    async def run(self, event: PendingEvent) -> bool:
        """Handle one stored event as a task of its own, which a shutdown leaves its
        grace period to finish even when the worker that started it stops (see drain).
        False when it stays pending (the store failed) and must be taken again."""
        event_id = str(event.source.get("event_id", ""))
        if event_id in self._handling:
            return True  # still being answered since before the workers started again
        self._handling.add(event_id)
        if (event.decision or {}).get("kind") in self._background:
            task = self.spawn(self._in_background(event))
            task.add_done_callback(lambda _: self._handling.discard(event_id))
            return True
        done = asyncio.get_running_loop().create_future()
        task = self.spawn(self._handled(event, done))
        task.add_done_callback(lambda _: self._handling.discard(event_id))
        return await asyncio.shield(done)

    async def _in_background(self, event: PendingEvent) -> None:
        """Background work whose store failed is tried again here (its worker has moved
        on), until done or the process stops (then it is pending at the next start)."""
        while True:
            done = asyncio.get_running_loop().create_future()
            await self._handled(event, done)
            if done.result():
                return
            await asyncio.sleep(self.background_retry_seconds)

    async def _handled(self, event: PendingEvent, done: asyncio.Future[bool]) -> None:
        """`handle`, with the workers' catch-all; `done` says whether it was handled."""
        event_id = str(event.source.get("event_id", ""))
        handled = True
        try:
            await self.handle(event)
        except asyncio.CancelledError:
            done.cancel()  # as the worker would have seen it: the event stays pending
            raise
        except (StorageError, KnowledgeUnavailable) as exc:
            # An outage, not the event's fault (a question's own outage is answered as
            # such in `_reply_to`): it stays pending and is tried again.
            log.warning("message %s stays pending: %s", event_id, exc)
            handled = False
        except Exception:
            # The catch-all of the workers: an event that fails this way would fail again
            # (a malformed event, a bug), so it is not taken again and again.
            reference = uuid.uuid4().hex[:8]
            log.exception("event %s could not be handled (reference %s)", event_id, reference)
            try:
                await self.state.mark_done(event_id)
            except StorageError:
                handled = False
        finally:
            if not done.done():
                done.set_result(handled)

    async def _stored_decision(
        self, event: PendingEvent
    ) -> tuple[IncomingMessage | None, Decision]:
        """The decision stored with the message at sync time. One an earlier release
        stored is decided again when the workers start (bot/inbox/upgrade.py); one that
        came in since from a process of that release, here."""
        decision = decode_decision(event.decision) if event.decision is not None else None
        if decision is None:
            return await self.router.route(event)
        return parse_message(event.source, RoomID(event.room_id)), decision

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
        (StorageError, see `run`); it is marked done otherwise. A reply whose feature is
        turned off since it came says so; work whose feature is off is dropped."""
        message, decision = await self._stored_decision(event)
        event_id = str(event.source.get("event_id", ""))
        match decide_handling(decision):
            case "reply" if message is not None:
                assert isinstance(decision, Actionable)
                replying = self._replies.get(type(decision), self._turned_off)
                await self._reply_to(event, message, decision, replying)
                return
            case "work":
                working = self._work.get(type(decision))
                if working is not None:
                    # What work says (the question after a 👎) is in the room's language:
                    # a reaction tells no language of its own.
                    LANGUAGE.set(self.languages.of_room(event.room_id))
                    await working(event, message, decision)
                else:
                    log.info("%s: no feature handles %s now", event_id, type(decision).__name__)
        await self.state.mark_done(event_id)

    async def _turned_off(self, reply: ReplyWriter, decision: Actionable) -> None:
        """The reply to a decision whose feature is not running (turned off in the
        config since the event came, or never on)."""
        await reply.finish(strings.TURNED_OFF)

    async def _reply_to(
        self,
        event: PendingEvent,
        message: IncomingMessage,
        action: Actionable,
        handler: ReplyHandler[Any],
    ) -> None:
        """Answer a question or a command; the single catch-all for replies."""
        if message.is_edit and self.follow_edit is not None:
            await self.follow_edit(message)  # an edit asked anew: its text changed
        # The reply kept with the message in the inbox; after a restart, in the same message.
        reply = self._reply(message, action.thread_root, resume_from=event.reply_event_id)
        ANSWER_ID.set(uuid.uuid4().hex)
        # Every sentence of this reply (and what it sets off) in the reader's language.
        LANGUAGE.set(
            await self.languages.of_message(message.room_id, message.body, message.msgtype)
        )
        try:
            await self._act_for_readers(reply, action, handler)
        except asyncio.CancelledError:
            # Shutting down: say so; the message stays pending for after the restart.
            await self._tell_failure(reply, strings.INTERRUPTED)
            raise
        except LlmError as exc:
            log.warning(
                "the language model failed for %s: %s (see %s)", message.event_id, exc, exc.setting
            )
            self._count_failure(failure_cause(exc))
            # What an incomplete answer wrote so far was computed for the readers as they
            # were: it is shown (quoted, no answer id) only while they are all who read.
            notice = build_failure_notice(exc, show_partial=reply.still_holds())
            await self._tell_failure(reply, notice)
        except StorageError:
            # The question stays pending and is answered again once the store is back,
            # into the message already sent (see ReplyWriter's transaction ids).
            raise
        except KnowledgeUnavailable as exc:
            log.warning("the documents could not be searched for %s: %s", message.event_id, exc)
            self._count_failure("knowledge_unavailable")
            await self._tell_failure(reply, strings.SEARCH_UNAVAILABLE)
        except Exception as exc:
            if isinstance(exc, WriteRefused) and not may_send(self.matrix):
                log.warning("message %s stays pending: %s", message.event_id, exc)
                return
            reference = uuid.uuid4().hex[:8]
            log.exception("answering %s failed (reference %s)", message.event_id, reference)
            self._count_failure("error")
            await self._tell_failure(reply, strings.ANSWER_FAILED.format(reference=reference))
        if not may_send(self.matrix):
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
            self.matrix,
            self.state,
            message,
            thread_root,
            edit_seconds,
            self.audiences.of_room(message.room_id),
            self.audiences.holds,
            in_inbox=True,
            resume_from=resume_from,
            bookkeeping=self._bookkeeping,
        )

    def _notice(self, message: IncomingMessage, thread_root: str) -> ReplyWriter:
        """An extra notice about `message`, not its reply (not kept in the inbox)."""
        edit_seconds = self.settings.current.pipeline.stream_edit_seconds
        return ReplyWriter(
            self.matrix,
            self.state,
            message,
            thread_root,
            edit_seconds,
            bookkeeping=self._bookkeeping,
        )

    async def _act_for_readers(
        self, reply: ReplyWriter, action: Actionable, handler: ReplyHandler[Any]
    ) -> None:
        """Act for the room's readers. When someone new can read the room before the
        reply is complete, what was shown is taken back (with shared history they could
        scroll to it), the room is told, and the work starts again for everyone now there."""
        room_id = reply.message.room_id
        for _ in range(AUDIENCE_ATTEMPTS):
            try:
                await handler(reply, action)
                return
            except AudienceChanged:
                log.info("new readers in %s while answering; answering again", room_id)
                await reply.take_back()
                await self._notice(reply.message, reply.thread_root).finish_fixed(
                    strings.AUDIENCE_CHANGED
                )
                reply.audience = self.audiences.of_room(room_id)
        await reply.finish_fixed(strings.AUDIENCE_UNSTABLE)

    def _count_failure(self, cause: str) -> None:
        if self.metrics is not None:
            self.metrics.failures.labels(cause).inc()

    async def _tell_failure(self, reply: ReplyWriter, text: str) -> None:
        """The failure notice in place of the reply. It is no answer, so reactions on it are
        no votes; what was shown of the reply goes if new readers came in meanwhile."""
        try:
            if not reply.still_holds():
                await reply.take_back()
            await reply.finish_fixed(text)
            if reply.event_id:
                for forget in self.after_failure:
                    await forget(reply.event_id)
        except SEND_ERRORS:
            log.warning("could not tell the asker about a failure in %s", reply.message.room_id)

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run `work` as one of the tasks a shutdown waits for (see drain)."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
