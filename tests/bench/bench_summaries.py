"""A room of 10,000 messages summarised: model calls, prompt tokens, time outside the
model, memory; then an incremental run over the messages that came after.

    .venv/bin/python -m tests.bench.bench_summaries [--messages 10000] [--new 200]

Starts a real Synapse on a free port (as the tests do) and fills a room while the bot
syncs it, each message going through the bot's own conversation into its memory store
(SQLite, embedded Chroma and the real embedding model, as the bot keeps a room's lines;
windows of 100 lines, see CONFIG).
Then reads the room back twice: from the homeserver alone (pagination over the client
API, as summaries did before) and as summaries do now (bot/features/summaries/lines.py:
the store for what its span covers, the homeserver before that). The model is the
project's scripted OpenAI-compatible server on real HTTP, answering at once, so the wall
time is the time spent outside the model: reading, prompts, HTTP, JSON, rendering. Each
read comes once the room is quiet (the bot's sync has seen past the last message by its
margin), as a scheduled summary usually finds it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import tempfile
import time
from pathlib import Path

from nio import AsyncClient, RoomCreateResponse

from bot.dev.synapse import ensure_synapse_venv, start_homeserver
from bot.features.answers.conversation import Conversation
from bot.features.summaries.history import fetch_lines
from bot.features.summaries.lines import LineReader
from bot.inbox.backfill import fetch_gap
from bot.inbox.events import parse_message
from bot.inbox.mentions import BotIdentity
from bot.matrix.nio_account import NioAccount
from bot.settings_holder import SettingsHolder
from core.config import parse_config
from core.config.llm import LlmSettings
from core.config.summaries import SummarySettings
from core.knowledge.search.embedding import Embedders
from core.knowledge.search.vectors import VectorStore
from core.llm.client import LlmClient
from core.llm.prompts import load_prompts
from core.memory.history import HistoryIndex
from core.memory.memory import ConversationMemory
from core.memory.store import SqlMemoryStore
from core.storage.sqlite import SqliteDatabase
from core.summaries.draft import SummaryLine
from core.summaries.summarizer import Summarizer
from tests.support.fake_llm import FakeLlm

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "bench password"
TOPICS = ["the release", "the database migration", "the VPN certificate", "lunch", "CI runners"]
CONFIG = """
[matrix]
homeserver = "{url}"
user_id = "{bot}"
password = "unused"

[bot]
data_dir = "{folder}"

[summaries]
max_messages = 100000

# One window embedded per 98 lines rather than per 6: with the homeserver and the poster
# on the same 2 cores, embedding 8-line windows does not keep up with a room saying 30
# messages a second for minutes; the lines left out (logged) are then, rightly, read
# from the homeserver, and the store's part of the read is smaller.
[memory]
window_lines = 100
"""


def scripted_model(body: dict) -> dict:
    """One decision per part (its first message); a merge keeps them all; the support
    check finds every point supported."""
    user = body["messages"][1]["content"]
    if body["response_format"]["json_schema"]["name"] == "summary_support":
        points = re.findall(r"^Point (\d+):", user, re.M)
        return {"points": [{"point": int(n), "risk": "low"} for n in points]}
    if "<summaries>" in user:
        drafts = [json.loads(line) for line in user.split("\n") if line.startswith("{")]
        return {
            "tldr": "merged",
            "decisions": [d for x in drafts for d in x["decisions"]],
            "action_items": [],
            "open_questions": [],
        }
    first = int(re.search(r"\[(\d+)\]", user).group(1))
    return {
        "tldr": "part",
        "decisions": [{"text": "a decision", "messages": [first]}],
        "action_items": [],
        "open_questions": [],
    }


async def login(url: str, user_id: str) -> AsyncClient:
    client = AsyncClient(url, user_id)
    await client.login(PASSWORD)
    return client


async def post(client: AsyncClient, room: str, start: int, count: int) -> None:
    async def one(n: int) -> None:
        content = {
            "msgtype": "m.text",
            "body": f"message {n}: a thought about {TOPICS[n % len(TOPICS)]}, "
            f"with some detail so that it reads like a chat line number {n}",
        }
        await client.room_send(room, "m.room.message", content)

    for batch in range(start, start + count, 50):
        await asyncio.gather(*(one(n) for n in range(batch, min(batch + 50, start + count))))


async def sync_into(
    matrix: NioAccount, conversation: Conversation, stop: asyncio.Event, quiet_after: list[float]
) -> None:
    """The bot's sync as it feeds the conversation (bot/inbox/sync.py): every message of
    each batch, with what a limited timeline left out read back; until `stop`, once a
    sync brings nothing new and the room is quiet: the sync has seen past the margin
    after the last message (`quiet_after`), as a room is when nobody is typing."""
    token: str | None = None
    while True:
        asked_at = time.time()
        batch = await matrix.sync(token, timeout_ms=1000 if token else 0, full_state=not token)
        for room in batch.joined:
            events = room.timeline
            if room.limited and token and room.prev_batch:
                gap = await fetch_gap(matrix, room.room_id, room.prev_batch, token)
                events = [*gap.events, *events]
            for source in events:
                message = parse_message(source, room.room_id)
                if message is not None:
                    await conversation.observe(message, False)
        token = batch.next_batch
        conversation.note_synced(asked_at)  # as the sync loop says it (bot/runtime/wiring.py)
        seen = conversation.seen_before()
        quiet = seen is not None and bool(quiet_after) and seen > quiet_after[0]
        if stop.is_set() and quiet and not any(room.timeline for room in batch.joined):
            return


async def keeping(conversation: Conversation, matrix: NioAccount, post) -> float:
    """Post while the bot syncs and keeps the lines; the seconds it took."""
    stop = asyncio.Event()
    started = time.perf_counter()
    quiet_after: list[float] = []
    syncing = asyncio.create_task(sync_into(matrix, conversation, stop, quiet_after))
    await post()
    seconds = time.perf_counter() - started
    quiet_after.append(time.time())
    stop.set()
    await syncing
    await conversation.settled()
    return seconds


async def summarize(summarizer: Summarizer, read, since: float) -> dict:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    lines: list[SummaryLine] = await read(since, time.time() + 60)
    read_s = time.perf_counter() - started
    result = await summarizer.summarize(
        lines, "**Summary**", timezone="UTC", part_tokens=SummarySettings().part_tokens
    )
    return {
        "messages": len(lines),
        "read_s": read_s,
        "total_s": time.perf_counter() - started,
        "calls": result.calls,
        "parts": result.parts,
        "prompt_tokens": result.prompt_tokens,
        "rss_growth_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024,
        "last_ts": lines[-1].ts if lines else since,
    }


def show(title: str, figures: dict) -> None:
    print(
        f"{title}: {figures['messages']} messages read in {figures['read_s']:.1f} s; "
        f"{figures['calls']} model calls ({figures['parts']} parts + merges), "
        f"{figures['prompt_tokens']:,} prompt tokens; {figures['total_s']:.1f} s outside the "
        f"model in all; peak memory grew {figures['rss_growth_mb']:.0f} MB"
    )


async def the_bots_lines(
    matrix: NioAccount, url: str, folder: str
) -> tuple[Conversation, LineReader, SqliteDatabase]:
    """The bot's conversation keeping lines in its memory store (history on), and the
    summaries' reader of them, as bot/runtime/app.py wires them."""
    config = CONFIG.format(url=url, bot=matrix.user_id, folder=folder)
    settings = SettingsHolder(parse_config(config, origin="bench", env={}, base_dir=Path(folder)))
    db = await SqliteDatabase.open(Path(folder) / "memory.sqlite3")
    store = await SqlMemoryStore.open(db)
    vectors = VectorStore(None, Path(folder))  # embedded Chroma
    history = HistoryIndex(store, vectors, Embedders(), lambda: settings.current)
    memory = ConversationMemory(store, history, lambda: settings.current)

    async def from_the_start(room_id: str) -> int:
        return 0

    conversation = Conversation(
        BotIdentity(matrix.user_id, "bot"), settings, memory, from_the_start
    )
    reader = LineReader(matrix, settings, memory)
    reader.held = conversation
    return conversation, reader, db


async def main(messages: int, new: int) -> None:
    python = ensure_synapse_venv(Path(os.environ.get("SYNAPSE_VENV", ROOT / ".venv-synapse")))
    with tempfile.TemporaryDirectory() as folder:
        server = start_homeserver(Path(folder) / "synapse", python)
        llm = await FakeLlm().start()
        llm.respond = scripted_model
        client = LlmClient(LlmSettings(url=llm.url, model="test-model", max_concurrency=8))
        try:
            poster_id = server.register("poster", PASSWORD)
            bot_id = server.register("bot", PASSWORD)
            poster, bot = await login(server.url, poster_id), await login(server.url, bot_id)
            created = await poster.room_create(invite=[bot_id])
            assert isinstance(created, RoomCreateResponse), created
            room = created.room_id
            await bot.join(room)
            matrix = NioAccount(bot)
            conversation, reader, memory_db = await the_bots_lines(matrix, server.url, folder)
            keeper = asyncio.create_task(conversation.keep_history())
            seconds = await keeping(conversation, matrix, lambda: post(poster, room, 0, messages))
            print(f"seeded {messages} messages in {seconds:.0f} s, each kept by the bot as it came")
            summarizer = Summarizer(client, load_prompts, None)

            async def from_homeserver(start: float, end: float) -> list[SummaryLine]:
                return await fetch_lines(matrix, room, start, end, max_messages=100_000)

            async def from_store(start: float, end: float) -> list[SummaryLine]:
                return await reader.read(room, start, end)

            full = await summarize(summarizer, from_homeserver, 0.0)
            show("full summary, read from the homeserver alone", full)
            stored = await summarize(summarizer, from_store, 0.0)
            show("full summary, read from the store (homeserver before its span)", stored)
            assert stored["messages"] == full["messages"], (stored["messages"], full["messages"])
            span = await reader.memory.store.line_span(room) if reader.memory else None
            held = sum(
                1
                for line in await from_store(0.0, time.time() + 60)
                if span is not None and line.ts >= span
            )
            print(
                f"  of which {held} from the store, {stored['messages'] - held} from the "
                "homeserver (said before the store's span of the room)"
            )
            await keeping(conversation, matrix, lambda: post(poster, room, messages, new))
            since = full["last_ts"] + 0.001
            show("incremental run, homeserver", await summarize(summarizer, from_homeserver, since))
            show("incremental run, store", await summarize(summarizer, from_store, since))
            for person in (poster, bot):
                await person.close()
            keeper.cancel()
            await asyncio.gather(keeper, return_exceptions=True)
            await memory_db.close()
        finally:
            await client.close()
            await llm.close()
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--new", type=int, default=200)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.messages, arguments.new))
