"""Wires the parts together and runs them until stopped."""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import URL

from bot.features.catchup.desk import CatchupDesk
from bot.features.catchup.digests import SqlDigestStore, run_digests
from bot.features.catchup.receipts import SqlReceiptStore
from bot.features.feedback.desk import FeedbackDesk
from bot.features.files.keeper import FileKeeper
from bot.features.files.store import SqlFileStore
from bot.features.summaries.desk import SummaryDesk
from bot.features.summaries.lines import LineReader
from bot.features.summaries.schedules import keep_summary_jobs
from bot.features.upgrades.follower import UpgradeFollower
from bot.features.upgrades.store import SqlUpgradeStore
from bot.inbox.audience import Audiences
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.mentions import BotIdentity
from bot.inbox.state import LeaseLost, SqlStateStore
from bot.inbox.sync import SyncLoop
from bot.logs import apply_log_level
from bot.matrix.account import MatrixAccount
from bot.matrix.cross_signing import CrossSigningError
from bot.matrix.login import connect
from bot.matrix.nio_account import NioAccount
from bot.runtime.admin_reports import AdminReports, decide_admin_language
from bot.runtime.config_watch import ConfigWatcher
from bot.runtime.leadership import Leadership, drain_while_held, lead_when_holding
from bot.runtime.ops import OpsServer
from bot.runtime.retention import run_retention
from bot.runtime.token_watch import watch_token_file
from bot.runtime.wiring import FeatureParts, Wired, wire_account
from bot.settings_holder import SettingsHolder
from core.answering import Answerer, NoKnowledgeAnswerer, PredeterminedFirst
from core.config import Settings, load_config
from core.config.llm import LlmTask
from core.feedback.ranking import FeedbackRanking
from core.feedback.store import SqlFeedbackStore
from core.guardrails.guard import Guarded
from core.guardrails.rate_store import SqlRateLimits
from core.health import Check
from core.i18n.catalogs import available_languages, translations
from core.i18n.detection import LanguageFinder
from core.i18n.language import speaking
from core.knowledge.parse.extractor import Extractor
from core.knowledge_base.base import KnowledgeBase
from core.ledger.store import SqlLedgerStore
from core.llm.client import LlmClient
from core.llm.prompts import Prompts, load_prompts
from core.memory.answerer import MemoryFirst
from core.memory.history import HistoryIndex
from core.memory.memory import ConversationMemory
from core.memory.store import SqlMemoryStore
from core.metrics import Metrics
from core.passages import PassagesAnswerer
from core.pipeline.answer import AnswerPipeline
from core.privacy import keep_private
from core.rights.gaps import build_unshown_notices, decide_unshown_collections
from core.serve import run_knowledge_services
from core.speech import open_transcriber
from core.storage.opening import Storage
from core.summaries.schedule import SummaryScheduler, build_job_store_url
from core.summaries.store import SqlSummaryMarks, SummaryMarks
from core.summaries.summarizer import Summarizer
from core.supervise import Supervisor
from core.timerange import TimeExpressionFinder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Parts:
    """What every process opens, active or standing by."""

    state: SqlStateStore
    kb: KnowledgeBase | None
    memory: ConversationMemory
    feedback: SqlFeedbackStore
    marks: SummaryMarks
    metrics: Metrics
    answerer: Answerer
    receipts: SqlReceiptStore
    digests: SqlDigestStore
    ledger: SqlLedgerStore
    limits: SqlRateLimits
    files: SqlFileStore
    upgrades: SqlUpgradeStore


class BotApp:
    def __init__(
        self,
        config_path: Path,
        env: Mapping[str, str],
        *,
        answerer: Answerer | None = None,
        handle_signals: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config_path = config_path
        self.env = env
        self.answerer = answerer
        self._llm: LlmClient | None = None
        self._loaded_prompts: tuple[dict, Prompts] | None = None
        self.handle_signals = handle_signals
        # Epoch seconds now, for who may read what since when (rooms' memberships and
        # retention): tests move it on instead of waiting.
        self.clock = clock
        # Validated here, so that a broken config stops the start before any I/O.
        self.settings = SettingsHolder(load_config(config_path, env))
        self.ready = asyncio.Event()
        # While this process is the active one: its Matrix connection and sync loop.
        self._matrix: MatrixAccount | None = None
        self._sync: SyncLoop | None = None
        # One per process: its models take ~220 MiB, loaded before the lease is taken.
        self.languages = LanguageFinder()
        # What the admin room is told (config edits, services that cannot run).
        self.reports = AdminReports(lambda: self.settings.current.bot.admin_room)
        self._told_unshown = False

    async def run(self) -> None:
        """Open the stores and serve the ingestion API; sync and answer while this process
        holds the account's lease, standing by while another does; until cancelled."""
        data_dir = self.settings.current.bot.data_dir
        # Here rather than in `main` only, so that a bot started in-process gets them too.
        apply_log_level(self.settings.current.bot.log_level)
        keep_private(data_dir)
        for why, names in decide_unshown_collections(self.settings.current).items():
            log.warning("the documents of %s are never shown (%s)", ", ".join(names), why)
        storage = Storage(self.settings.current.storage, data_dir)
        kb: KnowledgeBase | None = None
        try:
            state = await SqlStateStore.open(await storage.database("state"))
            kb = await self._open_knowledge(storage)
            ledger = await SqlLedgerStore.open(await storage.database("summaries"))
            memory = await self._open_memory(kb, storage, ledger)
            feedback_store = await SqlFeedbackStore.open(await storage.database("feedback"))
            metrics = Metrics()
            if kb:
                metrics.watch_queue(kb.jobs.queue_depth)
                kb.retriever.adjustments = FeedbackRanking(feedback_store, self._current).factors
            if self.settings.current.llm.url:
                self._llm = LlmClient(self.settings.current.llm)
            marks = await SqlSummaryMarks.open(await storage.database("summaries"))
            limits = await SqlRateLimits.open(await storage.database("guardrails"))
            answerer = self.answerer or Guarded(
                MemoryFirst(
                    PredeterminedFirst(self._answerer_for(kb, memory), self._current),
                    memory,
                    self._current,
                ),
                self._current,
                memory,
                limits,
            )
            receipts = await SqlReceiptStore.open(state.db)
            digests = await SqlDigestStore.open(state.db)
            parts = Parts(
                state,
                kb,
                memory,
                feedback_store,
                marks,
                metrics,
                answerer,
                receipts,
                digests,
                ledger,
                limits,
                await SqlFileStore.open(state.db),
                await SqlUpgradeStore.open(state.db),
            )
            await self.languages.load()
            # Compiled now, so that a broken catalog stops the start, not a notice.
            for language in available_languages():
                translations(language)
            bot = self.settings.current.bot
            leadership = Leadership(state, self.settings.current.matrix.user_id, bot.lease_seconds)
            watcher = ConfigWatcher(self.config_path, self.env, self.settings, self._report)
            if self.handle_signals:
                watcher.reload_on_sighup()
            supervisor = Supervisor(stop_on=(LeaseLost,), on_failure=self.reports.service_failing)
            await self._run_loops(parts, leadership, supervisor, watcher)
        finally:
            if kb:
                await kb.close()
            await storage.close()
            if self._llm:
                await self._llm.close()

    async def _run_loops(
        self, parts: Parts, leadership: Leadership, supervisor: Supervisor, watcher: ConfigWatcher
    ) -> None:
        """Every process's loops, and the account's when it is the active one. What ends
        the bot (a homeserver refusing the login) is raised as itself, not in a group."""
        kb, answerer = parts.kb, parts.answerer
        try:
            async with asyncio.TaskGroup() as group:

                def keep(name: str, start: Callable[[], Awaitable[None]]) -> None:
                    group.create_task(supervisor.keep_running(name, start))

                keep("config watcher", watcher.watch)
                keep("admin reports", self.reports.run)
                if kb:
                    # Each service supervised on its own (core/serve.py), reported here.
                    group.create_task(run_knowledge_services(kb, self._current, supervisor))
                keep("model warm-up", lambda: self._warm_up(kb, answerer))
                if self.settings.current.ops.enabled:
                    ops = OpsServer(
                        self._current,
                        parts.metrics,
                        self._sync_check,
                        kb,
                        supervisor.reasons,
                        standby=lambda: not leadership.active,
                    )
                    keep("health endpoint", ops.run)
                group.create_task(
                    lead_when_holding(
                        leadership, lambda: self._run_active(parts, leadership, supervisor)
                    )
                )
        except ExceptionGroup as failed:
            # The one error inside groups of groups (the active process's loops run in
            # a group of their own): a login refused reads as itself, in one line.
            inner: BaseException = failed
            while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
                inner = inner.exceptions[0]
            raise inner from None

    async def _run_active(
        self, parts: Parts, leadership: Leadership, supervisor: Supervisor
    ) -> None:
        """Log in, sync and answer; the summary scheduler runs here, in the active process
        only. Raises LeaseLost when another process may have taken over."""
        data_dir = self.settings.current.bot.data_dir
        scheduler: SummaryScheduler | None = None
        matrix: NioAccount | None = None
        dispatcher: Dispatcher | None = None
        try:
            async with asyncio.TaskGroup() as group:

                def keep(name: str, start: Callable[[], Awaitable[None]]) -> None:
                    group.create_task(supervisor.keep_running(name, start))

                # Renewed from the start: logging in may take a while at a takeover.
                group.create_task(leadership.keep())
                self._matrix = matrix = await connect(
                    self.settings.current.matrix, data_dir, leadership.remaining
                )
                # Reports wait for the first sync to know the admin room (see the class).
                self.reports.connected(matrix, supervisor.reasons())
                if not self._told_unshown:
                    # Once a process: a collection left unshowable while the bot was
                    # stopped is said too, not only an edit that makes one.
                    self._told_unshown = True
                    with speaking(decide_admin_language(self.settings.current)):
                        for notice in build_unshown_notices(self.settings.current):
                            self.reports.tell(notice)
                wired, features = await self._wire(matrix, parts, leadership)
                dispatcher, sync, summaries = wired.dispatcher, wired.sync, features.summaries
                assert summaries is not None
                self._sync = sync
                keep("sync", sync.run)
                # The active process's alone: it is the one that sees the rooms' lines.
                keep("history lines", wired.conversation.keep_history)
                keep("history flusher", parts.memory.run_flusher)
                await sync.ready.wait()
                keep("answer workers", wired.workers.run)
                keep("retention", lambda: run_retention(dispatcher.audiences, wired.features))
                catchup = features.catchup
                if catchup is not None:
                    keep(
                        "digests",
                        lambda: run_digests(parts.digests, catchup.deliver, self.reports.tell),
                    )
                if matrix.encryption_on:
                    keep("cross-signing", lambda: self._cross_sign(matrix, data_dir))
                token_file = self.settings.current.matrix.token_file()
                if token_file is not None:
                    keep(
                        "access token file",
                        lambda: watch_token_file(token_file, matrix, self.reports.tell),
                    )
                scheduler = SummaryScheduler(
                    self._job_store_url(), str(data_dir.resolve()), summaries.run_scheduled
                )
                jobs = scheduler
                # Supervised like the other loops: a job store that is away (or refuses
                # the bot) stops the schedules alone, shown failing on /health, while the
                # bot answers on.
                keep(
                    "summary schedules",
                    lambda: keep_summary_jobs(jobs, matrix, self.settings, start=jobs.start),
                )
                self.ready.set()
        finally:
            self._sync = self._matrix = None
            self.reports.disconnected()
            if scheduler:
                await scheduler.stop()
            if dispatcher:
                # Answers in flight finish only while the lease surely holds.
                grace = self.settings.current.bot.shutdown_grace_seconds
                await drain_while_held(dispatcher, leadership, grace)
            if matrix:
                await matrix.close()
            await leadership.release()

    async def _wire(
        self, matrix: MatrixAccount, parts: Parts, leadership: Leadership
    ) -> tuple[Wired, FeatureParts]:
        """The dispatcher, its features and the sync loop, on the account's connection."""
        bot = BotIdentity(matrix.user_id, await matrix.display_name())
        audiences = Audiences(matrix, self.clock)
        feedback = FeedbackDesk(matrix, parts.state, parts.feedback, self.settings, parts.metrics)
        summarizer = self._summarizer(parts.kb)
        # One reader of the rooms' lines (the store's, then the homeserver's) for both.
        lines = LineReader(matrix, self.settings, parts.memory, bot=bot)
        summaries = SummaryDesk(
            matrix,
            summarizer,
            parts.marks,
            self.settings,
            parts.kb.indexer if parts.kb else None,
            TimeExpressionFinder(),
            parts.metrics,
            audiences,
            parts.ledger,
            lines,
        )
        catchup = CatchupDesk(
            matrix,
            parts.receipts,
            parts.digests,
            self._summarizer(parts.kb, "catchup"),
            self.settings,
            audiences,
            TimeExpressionFinder(),
            lines,
        )
        files = (
            FileKeeper(
                matrix,
                parts.state,
                parts.files,
                parts.kb.indexer,
                # Slots of their own: a burst of shared files never delays the API's.
                Extractor(
                    lambda: self.settings.current.files,
                    lambda: self.settings.current.knowledge.max_document_bytes,
                ),
                self.settings,
                summarizer,
            )
            if parts.kb is not None
            else None
        )
        speech = self.settings.current.speech
        upgrades = UpgradeFollower(matrix, parts.upgrades, self.settings)
        await upgrades.load()
        features = FeatureParts(
            parts.memory,
            feedback,
            summaries,
            catchup,
            parts.metrics,
            parts.limits,
            files,
            open_transcriber(speech),
            self.languages,
            upgrades,
        )
        wired = wire_account(
            matrix,
            parts.state,
            self.settings,
            bot,
            parts.answerer,
            audiences,
            await parts.state.first_start_ms(),
            features,
            leadership.lease,
        )
        return wired, features

    def _sync_check(self) -> Check:
        return self._sync.check() if self._sync else "failing"

    def _current(self) -> Settings:
        return self.settings.current

    def _answerer_for(self, kb: KnowledgeBase | None, memory: ConversationMemory) -> Answerer:
        """The LLM pipeline; search-only passages without an LLM; an echo without documents."""
        if kb is None:
            return NoKnowledgeAnswerer()
        if self._llm is None:
            return PassagesAnswerer(kb.retriever, kb.rights, self._current, memory)
        return AnswerPipeline(
            self._llm, kb.retriever, kb.rights, self._current, self._prompts, memory=memory
        )

    def _job_store_url(self) -> URL:
        current = self.settings.current
        return build_job_store_url(current.summaries, current.storage, current.bot.data_dir)

    def _summarizer(self, kb: KnowledgeBase | None, task: LlmTask = "summary") -> Summarizer:
        return Summarizer(
            self._llm,
            self._prompts,
            kb.embedders if kb else None,
            task,
            # A catch-up keeps only the TL;DR, which no point of the check covers.
            check_support=lambda: (
                task == "summary" and self.settings.current.summaries.check_support
            ),
        )

    def _prompts(self) -> Prompts:
        """The prompts of the running config, read again only when the overrides change."""
        overrides = self.settings.current.prompts.overrides()
        if self._loaded_prompts is None or self._loaded_prompts[0] != overrides:
            self._loaded_prompts = (overrides, load_prompts(overrides))
        return self._loaded_prompts[1]

    async def _cross_sign(self, matrix: MatrixAccount, data_dir: Path) -> None:
        """Once per start; a refusal is logged and left (the bot answers, unverified), a
        network failure is tried again by the supervisor."""
        password = self.settings.current.matrix.login_password()
        try:
            await matrix.cross_sign(data_dir, password)
        except CrossSigningError as exc:
            log.warning("the bot's device stays unverified: %s", exc)

    async def _warm_up(self, kb: KnowledgeBase | None, answerer: Answerer) -> None:
        """Load the models before the first question or history window needs them (a fresh
        process takes seconds to import torch and scikit-learn)."""
        if isinstance(answerer, Guarded):
            await asyncio.to_thread(answerer.toxicity.grade, "warm-up")
        if kb is not None:
            model = self.settings.current.knowledge.embedding_model
            embedder = await asyncio.to_thread(kb.embedders.get, model)
            await embedder.embed_queries(["warm-up"])
        log.info("models loaded")

    async def _open_memory(
        self, kb: KnowledgeBase | None, storage: Storage, ledger: SqlLedgerStore
    ) -> ConversationMemory:
        """Memories and turns always; the rooms' history needs the embedding model and
        Chroma of the knowledge base."""
        store = await SqlMemoryStore.open(await storage.database("memory"))
        history = HistoryIndex(store, kb.vectors, kb.embedders, self._current) if kb else None
        return ConversationMemory(store, history, self._current, ledger)

    async def _open_knowledge(self, storage: Storage) -> KnowledgeBase | None:
        """The knowledge base, when the config has collections (opened once per process)."""
        if not self.settings.current.collections:
            return None
        return await KnowledgeBase.open(self._current, storage=storage)

    async def _report(self, text: str) -> None:
        """Tell the admin room (through the active process; a standby only logs)."""
        self.reports.tell(text)


async def run_until_signalled(app: BotApp) -> None:
    """Run the bot until SIGINT or SIGTERM; messages in flight are answered after a restart."""
    task = asyncio.create_task(app.run())
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    try:
        await task
    except asyncio.CancelledError:
        log.info("stopped")
