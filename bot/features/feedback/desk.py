"""👍/👎 on the bot's answers: the I/O of votes, the question after a 👎 and its reply,
and the admins' !feedback reports."""

from __future__ import annotations

import json
import logging
import time

from bot.features.feature import Feature
from bot.features.feedback.commands import (
    build_export_record,
    build_feedback_reply,
    decide_feedback_request,
)
from bot.inbox.audience import AudienceChanged
from bot.inbox.decisions import KeepFeedback, ReportFeedback, Vote, WithdrawVote
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.render import build_notice
from bot.inbox.reply import ReplyWriter
from bot.inbox.state import PendingEvent, StateStore
from bot.matrix.account import MatrixAccount
from bot.settings_holder import SettingsHolder
from core import strings
from core.feedback.records import build_answer_record
from core.feedback.store import FeedbackStore
from core.ids import AnswerID, EventID, RoomID
from core.metrics import Metrics
from core.requests import Answer, Request
from core.storage.database import StorageError

log = logging.getLogger(__name__)
DAY = 86_400


class FeedbackDesk(Feature):
    def __init__(
        self,
        matrix: MatrixAccount,
        state: StateStore,
        store: FeedbackStore,
        settings: SettingsHolder,
        metrics: Metrics | None = None,
    ) -> None:
        self.matrix = matrix
        self.state = state
        self.store = store
        self.settings = settings
        self.metrics = metrics

    async def is_answer(self, room_id: str, event_id: str) -> bool:
        """Whether the event is one of the bot's answers in this room (a reaction to it
        is a vote)."""
        return await self.store.answer_of_event(event_id, room=room_id) is not None

    async def is_vote(self, room_id: str, event_id: str) -> bool:
        return await self.store.is_reaction(room_id, event_id)

    def register(self, dispatcher: Dispatcher) -> None:
        """The kinds of event this feature handles: votes and their withdrawal, the
        comment after a 👎, and `!feedback`; an answer replaced by a failure notice takes
        no votes."""
        dispatcher.on_work(Vote, self.take_vote)
        dispatcher.on_work(WithdrawVote, self.withdraw_vote)
        dispatcher.on_reply(KeepFeedback, self.keep_comment)
        dispatcher.on_command(ReportFeedback, self.command)
        dispatcher.after_failure.append(self.forget_answer_event)

    async def take_vote(self, event: PendingEvent, message: object, vote: Vote) -> None:
        """A 👍 or 👎 on an answer; after a 👎, the question what was wrong (when the
        config asks it). A store that fails leaves the vote pending, taken again
        shortly (see bot/inbox/workers.py)."""
        answer_id = await self.store.answer_of_event(vote.answer_event, room=event.room_id)
        if answer_id is None:
            return  # the answer was replaced by a failure notice since the vote came
        vote_event = str(event.source.get("event_id", ""))
        await self.store.add_reaction(
            vote_event, answer_id, vote.voter, vote.sign, vote.at_ms / 1000
        )
        if self.metrics is not None:
            self.metrics.feedback.labels(vote.sign).inc()
        if vote.sign == "down" and self.settings.current.feedback.ask_after_downvote:
            await self._ask_what_was_wrong(event.room_id, vote.answer_event, vote.voter, answer_id)

    async def withdraw_vote(
        self, event: PendingEvent, message: object, withdrawal: WithdrawVote
    ) -> None:
        """The vote's redaction: it counts no more."""
        await self.store.redact(event.room_id, withdrawal.vote_event)

    async def forget_message(
        self, room_id: RoomID, event_id: EventID, said_at: float | None
    ) -> None:
        """A redacted question or comment leaves the feedback records."""
        await self.store.forget_event(room_id, event_id)

    async def purge_room_before(self, room_id: RoomID, cutoff: float) -> None:
        await self.store.purge_room_before(room_id, cutoff)

    async def purge_expired(self) -> None:
        """Records older than `feedback.keep_days` go altogether."""
        kept = self.settings.current.feedback.keep_days * 86400
        removed = await self.store.purge_before(time.time() - kept)
        if removed:
            log.info("%d feedback records past feedback.keep_days removed", removed)

    async def erase_freed(self) -> None:
        await self.store.erase_freed()

    async def forget_answer_event(self, event_id: str) -> None:
        """A failure notice took the reply's place: reactions on it are no votes."""
        await self.store.forget_answer_event(event_id)

    async def _ask_what_was_wrong(self, room_id: str, answer_event: str, user: str, answer_id: str):
        thread = await self.state.thread_of(answer_event) or answer_event
        if await self.store.pending_ask(room_id, thread, user) == answer_id:
            return
        content = build_notice(
            strings.FEEDBACK_ASK, thread_root=thread, reply_to=answer_event, notify=user
        )
        event_id = await self.matrix.send(room_id, content)
        try:
            await self.state.record_bot_message(event_id, room_id, thread)
            await self.store.ask(room_id, thread, user, answer_id)
        except StorageError as exc:
            # The question went out: the vote is not taken again for this (it would ask
            # twice); the reply to it is then answered as a question.
            log.warning("the question after a 👎 was not recorded: %s", exc)

    async def asked(self, room_id: str, thread_root: str | None, user: str) -> bool:
        if not thread_root:
            return False
        return await self.store.pending_ask(room_id, thread_root, user) is not None

    async def keep_comment(self, reply: ReplyWriter, action: KeepFeedback) -> None:
        message = reply.message
        await self.store.add_comment(
            message.room_id, action.thread_root, message.sender, action.text, message.event_id
        )
        await reply.finish(strings.FEEDBACK_THANKS)

    async def answer_posted(self, event_id: EventID, answer_id: AnswerID) -> None:
        """A vote on an answer's message counts as soon as it is there."""
        await self.store.note_answer_event(event_id, answer_id)

    async def answer_finished(
        self, request: Request, answer: Answer, event_id: EventID, text: str
    ) -> None:
        """The answer's record, which votes and the admins' reports use."""
        await self.record(request, answer, event_id, text)

    async def record(self, request: Request, answer: Answer, event_id: str, text: str) -> None:
        room = self.matrix.room(request.room)
        encrypted = room is None or room.encrypted
        record = build_answer_record(request, answer, event_id, text, encrypted=encrypted)
        await self.store.store_answer(record)

    async def command(self, reply: ReplyWriter, action: ReportFeedback) -> None:
        """!feedback: for the configured admins, in the admin room only."""
        settings = self.settings.current
        message = reply.message
        wanted = decide_feedback_request(
            action.request,
            sender=message.sender,
            room=message.room_id,
            admins=settings.feedback.admins,
            admin_room=settings.bot.admin_room,
            prefix=settings.bot.command_prefix,
        )
        if isinstance(wanted, str):
            await reply.finish(wanted)
            return
        since = time.time() - wanted.days * DAY
        readers = reply.audience.readers if reply.audience else frozenset()
        here = self.matrix.room(message.room_id)
        encrypted = bool(here and here.encrypted)
        if wanted.kind == "export":
            lines = [
                json.dumps(build_export_record(record, readers, encrypted), default=str)
                async for record in self.store.export(since)
            ]
            name = f"feedback-last-{wanted.days}-days.jsonl"
            data = ("\n".join(lines) + "\n").encode() if lines else b""
            if not reply.still_holds():
                raise AudienceChanged(message.room_id)
            await self.matrix.send_file(message.room_id, name, data, "application/x-ndjson")
            await reply.finish(strings.FEEDBACK_EXPORTED.format(count=len(lines), name=name))
            return
        text = build_feedback_reply(
            wanted,
            counts={
                days: await self.store.room_counts(time.time() - days * DAY) for days in (7, 30)
            },
            worst=await self.store.worst(since, wanted.limit),
            room_readers=readers,
            room_encrypted=encrypted,
            via=self.matrix.user_id,
        )
        await reply.finish(text)
