"""A room of 10,000 messages summarised: model calls, prompt tokens, time outside the
model, memory; then an incremental run over the messages that came after.

    .venv/bin/python -m tests.bench.bench_summaries [--messages 10000] [--new 200]

Starts a real Synapse on a free port (as the tests do), fills a room, and reads it back
with the bot's history reader (pagination over the client API). The model is the
project's scripted OpenAI-compatible server on real HTTP, answering at once, so the wall
time is the time spent outside the model: reading, prompts, HTTP, JSON, rendering.
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
from bot.features.summaries.history import fetch_lines
from bot.matrix.nio_account import NioAccount
from core.config.knowledge import DEFAULT_EMBEDDING_MODEL
from core.config.llm import LlmSettings
from core.config.summaries import SummarySettings
from core.llm.client import LlmClient
from core.llm.prompts import load_prompts
from core.summaries.summarizer import Summarizer
from tests.support.fake_llm import FakeLlm

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "bench password"
TOPICS = ["the release", "the database migration", "the VPN certificate", "lunch", "CI runners"]


def scripted_model(body: dict) -> dict:
    """One decision per part (its first message); a merge keeps them all."""
    user = body["messages"][1]["content"]
    if "<summaries>" in user:
        drafts = [json.loads(line) for line in user.split("\n") if line.startswith("{")]
        return {"tldr": "merged", "decisions": [d for x in drafts for d in x["decisions"]],
                "action_items": [], "open_questions": []}  # fmt: skip
    first = int(re.search(r"\[(\d+)\]", user).group(1))
    return {"tldr": "part", "decisions": [{"text": "a decision", "messages": [first]}],
            "action_items": [], "open_questions": []}  # fmt: skip


async def login(url: str, user_id: str) -> AsyncClient:
    client = AsyncClient(url, user_id)
    await client.login(PASSWORD)
    return client


async def post(client: AsyncClient, room: str, start: int, count: int) -> None:
    async def one(n: int) -> None:
        content = {"msgtype": "m.text",
                   "body": f"message {n}: a thought about {TOPICS[n % len(TOPICS)]}, "
                           f"with some detail so that it reads like a chat line number {n}"}  # fmt: skip
        await client.room_send(room, "m.room.message", content)

    for batch in range(start, start + count, 50):
        await asyncio.gather(*(one(n) for n in range(batch, min(batch + 50, start + count))))


async def summarize(summarizer: Summarizer, matrix: NioAccount, room: str, since: float) -> dict:
    await matrix.client.sync(timeout=0)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    lines = await fetch_lines(matrix, room, since, time.time() + 60, max_messages=100_000)
    read = time.perf_counter() - started
    result = await summarizer.summarize(
        lines, "**Summary**", timezone="UTC", part_tokens=SummarySettings().part_tokens
    )
    return {
        "messages": len(lines), "read_s": read, "total_s": time.perf_counter() - started,
        "calls": result.calls, "parts": result.parts, "prompt_tokens": result.prompt_tokens,
        "rss_growth_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024,
        "last_ts": lines[-1].ts if lines else since,
    }  # fmt: skip


def show(title: str, figures: dict) -> None:
    print(f"{title}: {figures['messages']} messages read in {figures['read_s']:.1f} s; "
          f"{figures['calls']} model calls ({figures['parts']} parts + merges), "
          f"{figures['prompt_tokens']:,} prompt tokens; {figures['total_s']:.1f} s outside the "
          f"model in all; peak memory grew {figures['rss_growth_mb']:.0f} MB")  # fmt: skip


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
            started = time.perf_counter()
            await post(poster, room, 0, messages)
            print(f"seeded {messages} messages in {time.perf_counter() - started:.0f} s")
            summarizer = Summarizer(client, load_prompts, None, lambda: DEFAULT_EMBEDDING_MODEL)
            full = await summarize(summarizer, NioAccount(bot), room, 0.0)
            show("full summary", full)
            await post(poster, room, messages, new)
            incremental = await summarize(
                summarizer, NioAccount(bot), room, full["last_ts"] + 0.001
            )
            show("incremental run", incremental)
            for person in (poster, bot):
                await person.close()
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
