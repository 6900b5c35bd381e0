"""The active process's parts on its account: the router, the dispatcher with each
feature's handlers, the workers and the sync loop with its observers. Used by the app
and, with a FakeAccount, by the tests of the bot's logic (tests/bot/harness.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from bot.features.answers.answering import QuestionDesk
from bot.features.answers.conversation import Conversation
from bot.features.catchup.desk import CatchupDesk
from bot.features.commands.help import HelpDesk
from bot.features.feature import Feature
from bot.features.feedback.desk import FeedbackDesk
from bot.features.files.keeper import FileKeeper
from bot.features.following.follower import MessageFollower
from bot.features.memory.desk import MemoryDesk
from bot.features.sources.desk import SourcesDesk
from bot.features.summaries.desk import SummaryDesk
from bot.features.upgrades.follower import UpgradeFollower
from bot.features.voice.desk import Transcribing, VoiceDesk
from bot.inbox.audience import Audiences
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.mentions import BotIdentity
from bot.inbox.router import Router
from bot.inbox.state import Lease, StateStore
from bot.inbox.sync import SyncLoop
from bot.inbox.upgrade import redecide_stored
from bot.inbox.workers import AnswerWorkers
from bot.matrix.account import MatrixAccount
from bot.matrix.types import SyncBatch
from bot.settings_holder import SettingsHolder
from core.answering import Answerer
from core.guardrails.rate_store import RateLimits
from core.i18n.detection import LanguageFinder
from core.memory.memory import ConversationMemory
from core.metrics import Metrics


@dataclass(frozen=True)
class FeatureParts:
    """The features a config may leave out."""

    memory: ConversationMemory | None = None
    feedback: FeedbackDesk | None = None
    summaries: SummaryDesk | None = None
    catchup: CatchupDesk | None = None
    metrics: Metrics | None = None
    # Shared with the questions' guardrails; in this process's memory when not given.
    limits: RateLimits | None = None
    files: FileKeeper | None = None
    # Voice messages are transcribed with it ([speech]); ignored without.
    transcriber: Transcribing | None = None
    # Detects the asker's language for replies; without it, English unless the room
    # sets its language.
    languages: LanguageFinder | None = None
    # Follows rooms into their upgrades; without it, an upgraded room is left behind.
    upgrades: UpgradeFollower | None = None


@dataclass(frozen=True)
class Wired:
    router: Router
    dispatcher: Dispatcher
    conversation: Conversation
    workers: AnswerWorkers
    sync: SyncLoop
    # Every feature running, for what runs beside the dispatcher (the retention).
    features: list[Feature]


def wire_account(
    matrix: MatrixAccount,
    state: StateStore,
    settings: SettingsHolder,
    bot: BotIdentity,
    answerer: Answerer,
    audiences: Audiences,
    first_start_ms: int,
    parts: FeatureParts,
    lease: Lease | None = None,
) -> Wired:
    """Every event kind to the feature that handles it."""
    memory, feedback = parts.memory, parts.feedback
    router = Router(matrix, state, settings, bot, first_start_ms, feedback)
    # As wired, not as the config says now: [speech] takes a restart.
    router.transcribes = parts.transcriber is not None
    router.reads_files = parts.files is not None
    dispatcher = Dispatcher(
        matrix,
        state,
        settings,
        audiences,
        router,
        parts.metrics,
        languages=parts.languages,
        limits=parts.limits,
    )
    conversation = Conversation(bot, settings, memory, router.not_before_ms)
    # Summaries read the lines the conversation keeps, once those queued are kept.
    for desk in (parts.summaries, parts.catchup):
        if desk is not None:
            desk.lines.held = conversation
    questions = QuestionDesk(
        matrix,
        state,
        answerer,
        settings,
        bot,
        conversation.feed,
        dispatcher.spawn,
        memory=memory,
        metrics=parts.metrics,
        files=parts.files,
    )
    follower = MessageFollower(matrix, state, conversation.feed)
    voice = (
        VoiceDesk(
            matrix,
            state,
            parts.transcriber,
            questions,
            conversation,
            settings,
            dispatcher.languages,
        )
        if parts.transcriber is not None
        else None
    )
    # The features of this process, in one place (bot/features/feature.py): each registers
    # the kinds of decision it carries out, follows edits and redactions in its stores,
    # and drops what a room's retention no longer allows. Those the config leaves out
    # are None.
    listed: list[Feature | None] = [
        questions,
        HelpDesk(settings),
        SourcesDesk(settings),
        follower,
        MemoryDesk(memory, settings, conversation.settled) if memory is not None else None,
        parts.summaries,
        parts.catchup,
        feedback,
        parts.files,
        voice,
    ]
    features = [feature for feature in listed if feature is not None]
    for feature in features:
        feature.register(dispatcher)
    follower.features = [feature for feature in features if feature is not follower]
    questions.features = [feature for feature in features if feature is not questions]

    workers = AnswerWorkers(
        state,
        dispatcher.run,
        settings.current.bot.answer_workers,
        prepare=lambda: redecide_stored(state, router.route),
    )
    sync = SyncLoop(matrix, state, router, settings, workers, lease)

    async def note_members(batch: SyncBatch) -> None:
        audiences.observe(batch)
        # The messages of a room the bot left (kicked, say) before its leave are not
        # all seen: the store claims nothing of the room until it is back.
        for room_id in batch.left:
            conversation.leave_out(room_id, int(time.time() * 1000))

    sync.on_batch.append(note_members)
    if parts.upgrades is not None:
        router.replaced = parts.upgrades.replaced
        questions.predecessors = parts.upgrades.predecessors
        if parts.summaries is not None:
            parts.summaries.predecessors = parts.upgrades.predecessors
            parts.summaries.replaced = parts.upgrades.replaced
        sync.on_batch.append(parts.upgrades.observe)
    if parts.catchup is not None:
        sync.on_batch.append(parts.catchup.keep_receipts)
    sync.on_message.append(conversation.observe)
    sync.on_left_out.append(conversation.leave_out)
    sync.on_synced.append(conversation.note_synced)
    sync.on_redaction.append(conversation.note_redacted)
    return Wired(router, dispatcher, conversation, workers, sync, features)
