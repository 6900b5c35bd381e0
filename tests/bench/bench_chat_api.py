"""The chat API's time to first token beside the bot's, for the same questions, with a
model that answers each call after 300 ms.

    .venv/bin/python -m tests.bench.bench_chat_api [--size 10000] [--questions 30]

"bot" is the answerer the bot runs (guardrails, fixed answers, the pipeline) called as
the bot calls it, up to its first progress callback (the Matrix edit that shows it
comes after). "chat API" is the same pipeline behind `/v1/chat/completions`, asked with
the `openai` client over real HTTP, streamed, up to the first chunk with text. Both on
the synthetic corpus of bench_knowledge, the model being the scripted server.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from aiohttp.test_utils import TestServer
from openai import AsyncOpenAI

from core.answering import PredeterminedFirst
from core.chat_api.assistants import Assistants
from core.chat_api.server import ChatApi
from core.chat_api.service import CurrentPrompts
from core.chat_api.tokens import TokenBook, build_token_entry
from core.config import parse_config
from core.guardrails.guard import Guarded
from core.guardrails.rate_store import LocalRateLimits
from core.knowledge_base.base import KnowledgeBase
from core.llm.client import LlmClient
from core.pipeline.answer import AnswerPipeline
from core.requests import Request
from tests.bench.bench_knowledge import CONFIG, MODEL, Prose, build_corpus, percentile
from tests.pipeline.conftest import verdict
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
"""


def scripted(body: dict[str, Any]) -> str | dict:
    schema = body.get("response_format", {}).get("json_schema", {}).get("name")
    if schema == "prestep":
        return verdict()
    if schema == "support":
        return {"risk": "low"}
    return "The answer is in the first source [1], as it says there."


def report(name: str, first: list[float], total: list[float]) -> None:
    print(f"  {name:9} first token p50 {statistics.median(first):6.0f} ms  "
          f"p95 {percentile(first, 0.95):6.0f} ms   whole answer p50 "
          f"{statistics.median(total):6.0f} ms  p95 {percentile(total, 0.95):6.0f} ms")  # fmt: skip


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    llm = await FakeLlm(delay=LATENCY).start()
    llm.respond = scripted
    token, lines = build_token_entry("bench", "")
    (folder / "tokens.toml").write_text(lines)
    text = CONFIG.format(data_dir=folder).replace(
        "[collections.tickets]", "[collections.tickets]\npublic = true"
    )
    settings = parse_config(text + CHAT.format(url=llm.url), origin="bench", env={},
                            base_dir=folder)  # fmt: skip
    current = lambda: settings  # noqa: E731
    kb = await KnowledgeBase.open(current)
    prose = Prose(seed=2)
    base = np.array(
        kb.embedders.get(MODEL).encode([Prose(seed=5).paragraph() for _ in range(2_000)])
    )
    await build_corpus(kb, args.size, prose, base)
    prompts = CurrentPrompts(current)
    limits = LocalRateLimits()
    client = LlmClient(settings.llm)
    bot = Guarded(
        PredeterminedFirst(AnswerPipeline(client, kb.retriever, kb.rights, current, prompts),
                           current),
        current, None, limits,
    )  # fmt: skip
    assistants = Assistants(kb, current, prompts, limits)
    server = TestServer(ChatApi(assistants, current, TokenBook(folder / "tokens.toml"),
                                limits).build_app())  # fmt: skip
    await server.start_server()
    openai = AsyncOpenAI(base_url=str(server.make_url("/v1")), api_key=token, max_retries=0)
    questions = [prose.question() for _ in range(args.questions)]
    print(f"{args.size:,} chunks, model answering each call after {LATENCY * 1000:.0f} ms, "
          f"{args.questions} questions:")  # fmt: skip

    first: list[float] = []
    total: list[float] = []
    for question in questions:
        shown: list[float] = []

        async def progress(text: str, shown: list[float] = shown) -> None:
            shown.append(time.perf_counter())

        started = time.perf_counter()
        await bot.answer(Request(question, "@a:x.org", "!r", None, open_room=True), progress)
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
    print("  (the chat API's whole answer includes the support check, which the bot runs "
          "after showing the answer)")  # fmt: skip
    await openai.close()
    await server.close()
    await assistants.close()
    await client.close()
    await llm.close()
    await kb.close()


if __name__ == "__main__":
    asyncio.run(main())
