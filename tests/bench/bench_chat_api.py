"""The chat API's time to first token beside the bot's, and the MCP server's `search`
tool beside both, for the same questions, with a model that answers each call after
300 ms and every document of `tickets` checked with its application (answering after
5 ms, no decision cached) for the caller's reader.

    .venv/bin/python -m tests.bench.bench_chat_api [--size 10000] [--questions 30]

"bot" is the answerer the bot runs (guardrails, fixed answers, the pipeline) called as
the bot calls it, up to its first progress callback (the Matrix edit that shows it
comes after). "chat API" is the same pipeline behind `/v1/chat/completions`, asked with
the `openai` client over real HTTP, streamed, up to the first chunk with text. "MCP
search" is the `search` tool called with the MCP SDK's client over real HTTP, up to the
whole result. All on the synthetic corpus of bench_knowledge, the model being the
scripted server.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from aiohttp.test_utils import TestServer
from openai import AsyncOpenAI

from bot.dev.synapse import free_port
from core.answering import PredeterminedFirst
from core.chat_api.assistants import Assistants
from core.chat_api.server import ChatApi
from core.chat_api.service import CurrentPrompts
from core.chat_api.tokens import TokenBook, build_token_entry
from core.config import parse_config
from core.guardrails.guard import Guarded
from core.guardrails.rate_store import LocalRateLimits
from core.knowledge_base.api import IngestApi
from core.knowledge_base.base import KnowledgeBase
from core.llm.client import LlmClient
from core.mcp_server.service import start_mcp_service
from core.pipeline.answer import AnswerPipeline
from core.requests import Request
from tests.bench.bench_knowledge import CONFIG, Prose, build_corpus, percentile
from tests.mcp_server.conftest import connect_to
from tests.pipeline.conftest import verdict
from tests.rights.conftest import SourceApp, keys_toml, serve, write_key
from tests.support.fake_llm import FakeLlm

LATENCY = 0.3
CHAT = """
[llm]
url = "{url}"
model = "m"
max_retries = 0
reasoning_opens_in_prompt = false
[guardrails]
user_questions_per_minute = 0
room_questions_per_minute = 0
[chat_api]
enabled = true
tokens_file = "tokens.toml"
requests_per_minute = 10000
[assistants.all]
[rights]
issuer = "knowledge-bot"
cache_seconds = 0
{keys}
"""
READER = "@bench:example.org"
MODEL = "all-MiniLM-L6-v2"


class Everything(set[tuple[str, str]]):
    """The reader's access list at the application: every document."""

    def __contains__(self, item: object) -> bool:
        return True


def scripted(body: dict[str, Any]) -> str | dict:
    schema = body.get("response_format", {}).get("json_schema", {}).get("name")
    if schema == "prestep":
        return verdict()
    if schema == "support":
        return {"risk": "low"}
    return "The answer is in the first source [1], as it says there."


def report(name: str, first: list[float], total: list[float]) -> None:
    print(
        f"  {name:9} first token p50 {statistics.median(first):6.0f} ms  "
        f"p95 {percentile(first, 0.95):6.0f} ms   whole answer p50 "
        f"{statistics.median(total):6.0f} ms  p95 {percentile(total, 0.95):6.0f} ms"
    )


async def main() -> None:
    # Before the MCP SDK would set up its own (rich) logging for the whole process.
    logging.basicConfig(level=logging.WARNING)
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    llm = await FakeLlm(delay=LATENCY).start()
    llm.respond = scripted
    token, lines = build_token_entry("bench", READER)
    (folder / "tokens.toml").write_text(lines)
    tracker = SourceApp("tracker", "", acl={READER: Everything()}, delay=0.005)
    tracker_server = await serve(tracker)
    # tickets' documents are checked at the tracker for the caller's reader.
    rights_url = tracker_server.make_url("/rights")
    text = CONFIG.format(data_dir=folder, model=MODEL, extra="").replace(
        '[sources.tracker]\ntoken = "t"\n',
        f'[sources.tracker]\ntoken = "t"\nrights_url = "{rights_url}"\n'
        '[sources.tracker.readers]\nrule = "matrix_id"\n',
    )
    keys = keys_toml(("bot-1", "EdDSA", write_key(folder / "bot.pem")))
    mcp_port = free_port()
    settings = parse_config(
        text + CHAT.format(url=llm.url, keys=keys) + f"[mcp]\nenabled = true\nport = {mcp_port}\n"
        "requests_per_minute = 10000\n",
        origin="bench",
        env={},
        base_dir=folder,
    )
    current = lambda: settings  # noqa: E731
    kb = await KnowledgeBase.open(current)
    jwks = TestServer(IngestApi(kb, current).build_app())
    await jwks.start_server()
    tracker.jwks_url = str(jwks.make_url("/api/v1/jwks.json"))
    prose = Prose(seed=2)
    base = np.array(
        kb.embedders.get(MODEL).encode([Prose(seed=5).paragraph() for _ in range(2_000)])
    )
    await build_corpus(kb, args.size, prose, base, MODEL)
    prompts = CurrentPrompts(current)
    limits = LocalRateLimits()
    client = LlmClient(settings.llm)
    bot = Guarded(
        PredeterminedFirst(
            AnswerPipeline(client, kb.retriever, kb.rights, current, prompts), current
        ),
        current,
        None,
        limits,
    )
    assistants = Assistants(kb, current, prompts, limits)
    server = TestServer(
        ChatApi(assistants, current, TokenBook(folder / "tokens.toml"), limits).build_app()
    )
    await server.start_server()
    openai = AsyncOpenAI(base_url=str(server.make_url("/v1")), api_key=token, max_retries=0)
    questions = [prose.question() for _ in range(args.questions)]
    print(
        f"{args.size:,} chunks, model answering each call after {LATENCY * 1000:.0f} ms, "
        f"{args.questions} questions:"
    )

    first: list[float] = []
    total: list[float] = []
    for question in questions:
        shown: list[float] = []

        async def progress(text: str, shown: list[float] = shown) -> None:
            shown.append(time.perf_counter())

        started = time.perf_counter()
        await bot.answer(
            Request(question, READER, "!r", None, is_direct=True, readers=(READER,)), progress
        )
        total.append((time.perf_counter() - started) * 1000)
        first.append((shown[0] - started) * 1000)
    report("bot", first, total)

    first, total = [], []
    for question in questions:
        started = time.perf_counter()
        stream = await openai.chat.completions.create(
            model="all", messages=[{"role": "user", "content": question}], stream=True
        )
        seen = None
        async for chunk in stream:
            if seen is None and chunk.choices and chunk.choices[0].delta.content:
                seen = time.perf_counter()
        total.append((time.perf_counter() - started) * 1000)
        first.append(((seen or time.perf_counter()) - started) * 1000)
    report("chat API", first, total)
    print(
        "  (the chat API's whole answer includes the support check, which the bot runs "
        "after showing the answer)"
    )

    stop_mcp = await start_mcp_service(kb, current)
    searched: list[float] = []
    checks = len(tracker.requests)
    async with connect_to(f"http://127.0.0.1:{mcp_port}/mcp", token) as mcp:
        await mcp.call_tool("list_collections", {})  # the connection, as a client keeps it
        for question in questions:
            started = time.perf_counter()
            result = await mcp.call_tool("search", {"query": question, "limit": 8})
            searched.append((time.perf_counter() - started) * 1000)
            assert not result.is_error and result.structured_content["passages"]
    print(
        f"  {'MCP search':9} whole result p50 {statistics.median(searched):6.0f} ms  "
        f"p95 {percentile(searched, 0.95):6.0f} ms   "
        f"({(len(tracker.requests) - checks) / len(questions):.1f} rights checks a search)"
    )
    await stop_mcp()
    await jwks.close()
    await tracker_server.close()
    await openai.close()
    await server.close()
    await assistants.close()
    await client.close()
    await llm.close()
    await kb.close()


if __name__ == "__main__":
    asyncio.run(main())
