"""Voice messages, when [speech] names a transcription endpoint or a local model.

A voice message addressed to the bot (AnswerVoice: in a direct chat, a reply to it, in
its thread) is transcribed and answered as the question it asks; one that fails gets a
short notice. Other voice messages (KeepVoice) are transcribed into the room's history,
and with the room's `transcribe = "reply"` the transcript is posted in a thread on them
(as baibot does). The transcript is the sender's words: data, like any message; when
the voice message is redacted, the bot redacts the transcript it posted of it too.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Protocol

from bot.features.answers.answering import QuestionDesk
from bot.features.answers.conversation import Conversation
from bot.features.feature import Feature
from bot.inbox.decisions import AnswerQuestion, AnswerVoice, KeepVoice
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.events import IncomingMessage
from bot.inbox.language import ReplyLanguages
from bot.inbox.render import build_notice
from bot.inbox.reply import ReplyWriter
from bot.inbox.state import PendingEvent, StateStore
from bot.matrix.account import MatrixAccount
from bot.matrix.types import MatrixError
from bot.settings_holder import SettingsHolder
from core import strings
from core.i18n.language import LANGUAGE
from core.ids import EventID, RoomID
from core.speech import SpeechError

log = logging.getLogger(__name__)


class Transcribing(Protocol):
    async def transcribe(self, audio: bytes, name: str, media_type: str) -> str: ...


class VoiceDesk(Feature):
    def __init__(
        self,
        matrix: MatrixAccount,
        state: StateStore,
        transcriber: Transcribing,
        questions: QuestionDesk,
        conversation: Conversation,
        settings: SettingsHolder,
        languages: ReplyLanguages,
    ) -> None:
        self.matrix = matrix
        self.languages = languages
        self.state = state
        self.transcriber = transcriber
        # Voice messages kept (not asked) are transcribed one at a time: each is held
        # in memory whole.
        self._one_at_a_time = asyncio.Semaphore(1)
        self.questions = questions
        self.conversation = conversation
        self.settings = settings

    def register(self, dispatcher: Dispatcher) -> None:
        """The kinds of event this feature handles: voice messages, transcribed in the
        background, and answered when addressed to the bot."""
        dispatcher.on_reply(AnswerVoice, self.answer)
        dispatcher.on_work(KeepVoice, self.keep, background=True)

    async def forget_message(
        self, room_id: RoomID, event_id: EventID, said_at: float | None
    ) -> None:
        await self.forget(room_id, event_id)

    async def forget(self, room_id: str, event_id: str) -> None:
        """A redacted voice message takes the transcript posted of it down with it (the
        room's history and conversation forget its words with any message's)."""
        transcript = await self.state.take_transcript(room_id, event_id)
        if transcript is not None:
            await self.matrix.redact(room_id, transcript, strings.TRANSCRIPT_TAKEN_BACK)

    async def answer(self, reply: ReplyWriter, action: AnswerVoice) -> None:
        """The inbox's AnswerVoice: the transcript, answered as a question."""
        message = reply.message
        text = await self._transcript(message)
        if await self.state.was_redacted(message.event_id):
            return  # taken back while it was transcribed: nothing of it is kept or said
        if text is None:
            await reply.finish(strings.VOICE_FAILED)
            return
        # Spoken, the question's language is the transcript's (the message's body is
        # only the file's name).
        LANGUAGE.set(await self.languages.of_message(message.room_id, text))
        if self.settings.current.room(message.room_id).transcribe == "reply":
            await self._post(message, action.thread_root, text)
        question = AnswerQuestion(
            text,
            action.thread_root,
            direct=action.direct,
            in_conversation=action.in_conversation,
        )
        await self.questions.answer(reply, question)

    async def keep(
        self, event: PendingEvent, message: IncomingMessage | None, action: KeepVoice
    ) -> None:
        """The inbox's KeepVoice: the transcript into the room's history (and thread)."""
        if message is None:
            return
        async with self._one_at_a_time:
            text = await self._transcript(message)
        # Taken back while it was transcribed: its words go nowhere.
        if text is None or await self.state.was_redacted(message.event_id):
            return
        if action.post:
            await self._post(message, action.thread_root, text)
        await self.conversation.observe(
            replace(message, msgtype="m.text", body=text, file=None), spoken=True
        )

    async def _transcript(self, message: IncomingMessage) -> str | None:
        if message.file is None:
            return None
        limit = self.settings.current.speech.timeout_seconds
        try:
            async with asyncio.timeout(limit):
                audio = await self.matrix.fetch_media(
                    message.file.media, self.settings.current.speech.max_bytes
                )
            return await self.transcriber.transcribe(
                audio, message.file.name, message.file.media_type
            )
        except (MatrixError, SpeechError, TimeoutError) as exc:
            log.warning(
                "a voice message of %s was not transcribed: %s",
                message.room_id,
                type(exc).__name__ if isinstance(exc, TimeoutError) else exc,
            )
            return None

    async def _post(self, message: IncomingMessage, thread_root: str, text: str) -> None:
        content = build_notice(
            strings.VOICE_TRANSCRIPT.format(text=text),
            thread_root=thread_root,
            reply_to=message.event_id,
        )
        # The same transaction each time: a retry after a crash posts it once.
        posted = await self.matrix.send(
            message.room_id, content, txn_id=f"transcript-{message.event_id}"
        )
        await self.state.record_transcript(message.room_id, message.event_id, posted)
        if await self.state.was_redacted(message.event_id):
            # Taken back as it was posted: the redaction may have looked for it first.
            await self.forget(message.room_id, message.event_id)
