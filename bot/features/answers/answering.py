"""A question to the bot: the request for the core (who reads, what they may get, the
recent conversation), the answer streamed into the reply, and what is kept of it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from bot.features.answers.feed import Feed, FeedLine
from bot.features.feature import Feature
from bot.inbox.audience import AudienceChanged
from bot.inbox.decisions import AnswerQuestion, RefuseDevice
from bot.inbox.dispatcher import Dispatcher, Spawn
from bot.inbox.events import IncomingMessage
from bot.inbox.mentions import BotIdentity
from bot.inbox.reply import ReplyWriter
from bot.inbox.state import StateStore
from bot.logs import ANSWER_ID
from bot.matrix.account import SEND_ERRORS, MatrixAccount, typing_while
from bot.settings_holder import SettingsHolder
from core import strings
from core.answering import Answerer
from core.config import Settings
from core.i18n.language import decided_language
from core.ids import AnswerID, EventID, RoomID, UserID
from core.llm.client import LlmError
from core.memory.memory import ConversationMemory
from core.metrics import Metrics
from core.requests import Answer, ChatLine, Request
from core.sources import build_answer_markdown
from core.storage.database import StorageError

log = logging.getLogger(__name__)


class FileReasons(Protocol):
    """What the bot made of a shared file (bot/features/files)."""

    async def until_read(self, room_id: str, event_id: str) -> None:
        """Once it is read, if it is a file being read (bounded)."""
        ...

    async def reason_for(self, room_id: str, event_id: str) -> str | None:
        """Why it is no knowledge; None when it is (or is no file of the room)."""
        ...

    async def document_of(self, room_id: str, event_id: str) -> tuple[str, str] | None:
        """The (collection, id) it was kept as."""
        ...

    async def image_text(self, room_id: str, event_id: str) -> str | None:
        """The text read in it, when it is an image (None otherwise)."""
        ...


class QuestionDesk(Feature):
    def __init__(
        self,
        matrix: MatrixAccount,
        state: StateStore,
        answerer: Answerer,
        settings: SettingsHolder,
        bot: BotIdentity,
        feed: Feed,
        spawn: Spawn,
        *,
        memory: ConversationMemory | None = None,
        metrics: Metrics | None = None,
        files: FileReasons | None = None,
    ) -> None:
        self.matrix = matrix
        self.state = state
        self.answerer = answerer
        self.settings = settings
        self.bot = bot
        self.feed = feed
        self.spawn = spawn
        self.memory = memory
        # The features that keep what they need of answers (set by bot/runtime/wiring.py).
        self.features: list[Feature] = []
        self.metrics = metrics
        self.files = files
        # Questions now waiting for a shared file to be read.
        self._waiting_for_files = 0
        # The rooms a room replaced (bot/features/upgrades), newest first.
        self.predecessors: Callable[[str], tuple[RoomID, ...]] = lambda room: ()

    def _may_wait_for_a_file(self) -> bool:
        return self._waiting_for_files < max(1, self.settings.current.bot.answer_workers // 2)

    def register(self, dispatcher: Dispatcher) -> None:
        """The kinds of event this feature handles."""
        dispatcher.on_reply(AnswerQuestion, self.answer)
        dispatcher.on_reply(RefuseDevice, self.refuse_device)

    async def refuse_device(self, reply: ReplyWriter, action: RefuseDevice) -> None:
        """A message from a device its owner never cross-signed: why it is not acted on,
        once per device and room (the router decides the once), without quoting it."""
        await reply.finish(strings.UNVERIFIED_DEVICE)

    async def answer(self, reply: ReplyWriter, action: AnswerQuestion) -> None:
        """Answer into `reply`; the dispatcher reports what fails."""
        message = reply.message
        focus = None
        # The file (or image) the question is about: the one it replies to, or the image
        # that carried it (its caption, or an image sent to the bot).
        about = action.about or message.reply_to
        text = action.text or strings.IMAGE_QUESTION
        if self.files is not None and about and self._may_wait_for_a_file():
            # A file just shared may still be read in the background: the question waits
            # for it (with the placeholder when that takes a while). Half the answer
            # workers at most wait so; a question beyond is told the file is being read.
            self._waiting_for_files += 1
            reading = asyncio.ensure_future(self.files.until_read(message.room_id, about))
            try:
                await self._placeholder_unless_quick(reading, reply)
                await reading
            except BaseException:
                reading.cancel()
                raise
            finally:
                self._waiting_for_files -= 1
        if self.files is not None and about:
            # A question about a shared file the bot could not read: why, in one sentence.
            reason = await self.files.reason_for(message.room_id, about)
            if reason is not None:
                await reply.finish(reason)
                return
            focus = await self.files.document_of(message.room_id, about)
            # An image's text goes with the question: "what does this error mean?" is
            # searched for the error it shows.
            seen = await self.files.image_text(message.room_id, about)
            if seen:
                text = f"{text}\n\n" + "\n".join(f"> {line}" for line in seen.splitlines())
        request = replace(self._request(message, action, text, reply), focus=focus)
        answer_id = AnswerID(ANSWER_ID.get())

        async def posted(event_id: str) -> None:
            for feature in self.features:
                await feature.answer_posted(EventID(event_id), answer_id)

        reply.on_sent = posted
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
        if answer.reason == "nothing_found":
            text += build_nothing_found_next(self.settings.current, message.room_id)
        # Context for a follow-up from before it shows (for its readers only): the asker
        # may reply as soon as it does, while the reply's records are still written. Its
        # time in whole milliseconds, as the homeserver stamps messages: a reply within
        # the same millisecond still comes after it.
        bot = UserID(self.bot.user_id)
        readers = reply.audience.readers if reply.audience else frozenset()
        sent_at = int(time.time() * 1000) / 1000
        line = FeedLine(answer.id, ChatLine(bot, text, from_bot=True), sent_at, readers)
        self.feed.add(message.room_id, action.thread_root, line)
        try:
            event_id = await reply.finish(text, answer_id=answer.id)
        except BaseException:
            self.feed.follow(message.room_id, answer.id, bot, None)  # never shown
            raise
        if await self.state.was_redacted(message.event_id):
            # Redacted while it was answered: what the answer kept of it goes too.
            self.feed.follow(message.room_id, answer.id, bot, None)
            if self.memory is not None:
                await self.memory.store.forget_turns_of(message.room_id, message.event_id)
            return
        for feature in self.features:
            try:
                await feature.answer_finished(request, answer, EventID(event_id), text)
            except StorageError as exc:
                # The answer is out: it is not asked again (and the model called again)
                # for the record of it that votes would use.
                log.warning("the answer %s was not recorded: %s", answer.id, exc)
        if answer.followup:
            self.spawn(self._add_badge(reply, event_id, text, answer))

    def _request(
        self, message: IncomingMessage, action: AnswerQuestion, text: str, reply: ReplyWriter
    ) -> Request:
        audience = reply.audience
        assert audience is not None
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
            # Decided at sync time, and still so now: a third person who joined since (or
            # while the answer was written: it is written again) reads it too.
            is_direct=action.direct and len(audience.readers) <= 1,
            readers=tuple(sorted(audience.readers)),
            knowledge=audience.knowledge,
            plaintext_only=audience.plaintext_only,
            open_room=audience.open_room,
            event=message.event_id,
            in_bot_conversation=action.in_conversation,
            language=decided_language(),
            predecessors=self.predecessors(message.room_id),
        )

    async def _placeholder_unless_quick(self, work: asyncio.Future, reply: ReplyWriter) -> None:
        try:
            async with asyncio.timeout(self.settings.current.bot.placeholder_after_seconds):
                await asyncio.shield(work)
        except TimeoutError:
            await reply.placeholder()

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


def build_nothing_found_next(settings: Settings, room_id: str) -> str:
    """What to try after "I found nothing", where the room's commands can show what the
    bot searches (`!sources`); "" where they are off."""
    if not settings.room(room_id).commands_enabled:
        return ""
    return "\n\n" + strings.NOTHING_FOUND_NEXT.format(prefix=settings.bot.command_prefix)
