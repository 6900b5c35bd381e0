"""The bot's logic on a FakeAccount: the real sync loop, inbox, workers and dispatcher,
with SQLite stores in the test's folder and a scripted answerer. No homeserver: a test
says something in a room and waits for what the bot writes back, in milliseconds."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from bot.features.catchup.desk import CatchupDesk
from bot.features.catchup.digests import SqlDigestStore
from bot.features.catchup.receipts import SqlReceiptStore
from bot.features.feedback.desk import FeedbackDesk
from bot.features.files.keeper import FileKeeper
from bot.features.files.store import SqlFileStore
from bot.features.summaries.desk import SummaryDesk
from bot.features.summaries.lines import LineReader
from bot.inbox.audience import Audiences
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.mentions import BotIdentity
from bot.inbox.state import SqlStateStore
from bot.matrix.fake import FakeAccount, Written
from bot.runtime.wiring import FeatureParts, wire_account
from bot.settings_holder import SettingsHolder
from core import strings
from core.config import parse_config
from core.config.llm import LlmTask
from core.feedback.store import SqlFeedbackStore
from core.knowledge.ingest.indexer import Indexer
from core.knowledge.parse.extractor import Extractor
from core.ledger.store import SqlLedgerStore
from core.llm.prompts import load_prompts
from core.memory.memory import ConversationMemory
from core.memory.store import SqlMemoryStore
from core.requests import Answer, Progress, Request
from core.storage.sqlite import SqliteDatabase
from core.summaries.store import SqlSummaryMarks
from core.summaries.summarizer import Summarizer
from core.timerange import TimeExpressionFinder

BOT = "@bot:fake.test"
T = TypeVar("T")
CONFIG = """
[matrix]
homeserver = "http://127.0.0.1:1"
user_id = "@bot:fake.test"
password_env = "BOT_PASSWORD"
"""


@dataclass
class ScriptedAnswerer:
    """Answers "Answer to: <question>" unless `reply` says otherwise; keeps the requests."""

    requests: list[Request] = field(default_factory=list)
    reply: Callable[[Request], Answer] = lambda request: Answer(f"Answer to: {request.text}")
    # Set to hold answers until the test lets them go.
    gate: asyncio.Event | None = None
    # Called with each question as it comes, before it is answered.
    on_question: Callable[[Request], Awaitable[None]] | None = None

    async def answer(self, request: Request, progress: Progress | None = None) -> Answer:
        self.requests.append(request)
        if self.on_question is not None:
            await self.on_question(request)
        if self.gate is not None:
            await self.gate.wait()
        return self.reply(request)


@dataclass
class FileReading:
    """What reads and indexes shared files in a test: anything with the extractor's
    `extract` and the indexer's `put_many` and `delete`."""

    extractor: Any
    indexer: Any


@dataclass
class Bot:
    account: FakeAccount
    state: SqlStateStore
    dispatcher: Dispatcher
    answerer: ScriptedAnswerer
    settings: SettingsHolder
    feedback: SqlFeedbackStore | None = None

    def ask(self, room_id: str, sender: str, question: str, **content: object) -> str:
        """A question that mentions the bot; returns its event id."""
        event = self.account.say(
            room_id,
            sender,
            f"Knowledge Bot: {question}",
            **{"m.mentions": {"user_ids": [BOT]}},
            **content,
        )
        return str(event["event_id"])

    async def reply_to(self, event_id: str, timeout: float = 10.0) -> Written:
        """The bot's final message in reply to `event_id` (placeholders and streamed
        edits aside): the first one, or the edit that finished it."""

        def finished() -> Written | None:
            for written in self.account.messages():
                content = written.content
                relates = content.get("m.relates_to", {})
                new = content.get("m.new_content")
                body = (new or content).get("body", "")
                still_working = body.endswith(" …") or body == strings.PLACEHOLDER
                if _answers(relates, event_id, self.account) and not still_working:
                    return written
            return None

        return await self.account.wait_for(finished, timeout)


def _answers(relates: dict, event_id: str, account: FakeAccount) -> bool:
    """Whether a message (or an edit of one) is in reply to `event_id`."""
    if relates.get("rel_type") == "m.replace":
        original = account.events.get(relates.get("event_id", ""), {})
        relates = original.get("content", {}).get("m.relates_to", {})
    reply = relates.get("m.in_reply_to", {}).get("event_id")
    return event_id in (relates.get("event_id"), reply)


async def eventually(check: Callable[[], Awaitable[T | None]], timeout: float = 10.0) -> T:
    """What `check` returns once it returns something: for what shows in a store, not
    in the room."""
    async with asyncio.timeout(timeout):
        # A store has no event to wait on: it is read again until the row is there.
        while (result := await check()) is None:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    return result


@contextlib.asynccontextmanager
async def running_bot(
    tmp_path: Path,
    config: str = "",
    account: FakeAccount | None = None,
    *,
    feedback: bool = False,
    files: FileReading | None = None,
    transcriber: Any = None,
    languages: Any = None,
    rooms: bool = False,
) -> AsyncIterator[Bot]:
    """The bot's sync loop and workers running over a fake account until the block ends;
    with `feedback`, votes are taken (in a SQLite store of their own); with `files`,
    shared files are read with its extractor and indexer; with `transcriber`, voice
    messages are transcribed; with `languages` (a LanguageFinder), replies are in the
    asker's language; with `rooms`, the features that read the rooms (memories,
    summaries without a model, the ledger, catch-ups), built as the app builds them."""
    account = account or FakeAccount(BOT)
    settings = SettingsHolder(
        parse_config(
            CONFIG + config, origin="bot.toml", env={"BOT_PASSWORD": "x"}, base_dir=tmp_path
        )
    )
    # Each database is closed at the end, also when the start fails half-way.
    opened: list[SqliteDatabase] = []
    try:
        db = await SqliteDatabase.open(tmp_path / "state.sqlite3")
        opened.append(db)
        state = await SqlStateStore.open(db)
        answerer = ScriptedAnswerer()
        votes = None
        if feedback:
            opened.append(await SqliteDatabase.open(tmp_path / "feedback.sqlite3"))
            votes = await SqlFeedbackStore.open(opened[-1])
        keeper = (
            FileKeeper(
                account,
                state,
                await SqlFileStore.open(db),
                cast(Indexer, files.indexer),
                cast(Extractor, files.extractor),
                settings,
                _summarizer(settings, "summary"),
            )
            if files is not None
            else None
        )
        identity, audiences = BotIdentity(account.user_id, "Knowledge Bot"), Audiences(account)
        reading = (
            await _room_features(tmp_path, account, settings, identity, audiences, opened)
            if rooms
            else {}
        )
        parts = FeatureParts(
            feedback=FeedbackDesk(account, state, votes, settings) if votes else None,
            files=keeper,
            transcriber=transcriber,
            languages=languages,
            **reading,
        )
        wired = wire_account(account, state, settings, identity, answerer, audiences, 0, parts)
        dispatcher, workers, sync = wired.dispatcher, wired.workers, wired.sync
        # A store that failed is tried again at once: the tests make it fail and come back.
        workers.retry_seconds = dispatcher.background_retry_seconds = 0.02
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(sync.run())]
            await sync.ready.wait()
            tasks.append(group.create_task(workers.run()))
            if rooms:
                # As the app runs it: the rooms' lines kept in their history (an edit or a
                # redaction followed with memories waits until those said before it are).
                tasks.append(group.create_task(wired.conversation.keep_history()))
            try:
                yield Bot(account, state, dispatcher, answerer, settings, votes)
            finally:
                for task in tasks:
                    task.cancel()
                await dispatcher.drain()
    finally:
        for database in opened:
            await database.close()


async def _room_features(
    tmp_path: Path,
    account: FakeAccount,
    settings: SettingsHolder,
    identity: BotIdentity,
    audiences: Audiences,
    opened: list[SqliteDatabase],
) -> dict[str, Any]:
    """Memories, summaries, the ledger and catch-ups over SQLite files as the app keeps
    them (receipts and digests beside the inbox, `opened[0]`), with the summarizer that
    needs no model."""
    memory_db = await SqliteDatabase.open(tmp_path / "memory.sqlite3")
    summaries_db = await SqliteDatabase.open(tmp_path / "summaries.sqlite3")
    opened += [memory_db, summaries_db]
    ledger = await SqlLedgerStore.open(summaries_db)
    memory = ConversationMemory(
        await SqlMemoryStore.open(memory_db), None, lambda: settings.current, ledger
    )
    lines = LineReader(account, settings, memory, bot=identity)

    def summarizer(task: LlmTask) -> Summarizer:
        return _summarizer(settings, task)

    times = TimeExpressionFinder()
    summaries = SummaryDesk(
        account,
        summarizer("summary"),
        await SqlSummaryMarks.open(summaries_db),
        settings,
        None,
        times,
        None,
        audiences,
        ledger,
        lines,
    )
    catchup = CatchupDesk(
        account,
        await SqlReceiptStore.open(opened[0]),
        await SqlDigestStore.open(opened[0]),
        summarizer("catchup"),
        settings,
        audiences,
        times,
        lines,
    )
    return {"memory": memory, "summaries": summaries, "catchup": catchup}


def _summarizer(settings: SettingsHolder, task: LlmTask) -> Summarizer:
    """The summarizer without a model (the messages' own words)."""
    return Summarizer(
        None,
        lambda: load_prompts({}),
        None,
        task,
    )
