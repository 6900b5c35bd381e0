"""The answer pipeline's own overhead, with a model that answers each call after 300 ms.

    .venv/bin/python -m tests.bench.bench_pipeline [--size 100000] [--questions 50]

Prints, with the answer started beside the pre-step (`pipeline.early_answer`, the
default) and without: the time to the first streamed word and to the whole answer, the
number of model calls on the critical path (before the answer is complete; the support
check runs after it), and the overhead of the sequential path (everything except
waiting for the model), p50/p95. The index is the synthetic corpus of
bench_knowledge (see there); the model is the project's scripted OpenAI-compatible
server on real HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from core.config import parse_config
from core.config.llm import LlmSettings
from core.knowledge_base.base import KnowledgeBase
from core.llm.client import LlmClient
from core.llm.prompts import load_prompts
from core.pipeline.answer import AnswerPipeline
from core.requests import Request
from tests.bench.bench_knowledge import CONFIG, MODEL, Prose, build_corpus, percentile
from tests.pipeline.conftest import verdict
from tests.support.fake_llm import FakeLlm

LATENCY = 0.3


async def measure(
    pipeline: AnswerPipeline, llm: FakeLlm, prose: Prose, questions: int, early: bool
) -> None:
    totals, first_words, overheads, calls, grounding = [], [], [], [], []
    for _ in range(questions):
        llm.history.clear()
        llm.enqueue(verdict())
        llm.enqueue("The answer is in the first source [1].")
        request = Request(prose.question(), "@a:example.org", "!r", None, is_direct=True)
        shown: list[float] = []

        async def progress(text: str, shown: list[float] = shown) -> None:
            shown.append(time.perf_counter())

        started = time.perf_counter()
        answer = await pipeline.answer(request, progress)
        total = time.perf_counter() - started
        waiting = sum(step.seconds for step in answer.trace if step.name in ("prestep", "answer"))
        totals.append(total * 1000)
        first_words.append((shown[0] - started) * 1000)
        overheads.append((total - waiting) * 1000)
        calls.append(1 if early else len(llm.history))
        grounding.append(
            1000 * sum(s.seconds for s in answer.trace if s.name in ("retrieve", "rights"))
        )
    print("  answer started beside the pre-step:" if early else "  pre-step, then the answer:")
    print(
        f"    time to first word  p50 {statistics.median(first_words):6.0f} ms"
        f"   p95 {percentile(first_words, 0.95):6.0f} ms"
    )
    print(
        f"    time to answer      p50 {statistics.median(totals):6.0f} ms"
        f"   p95 {percentile(totals, 0.95):6.0f} ms"
    )
    if early:
        print("    model calls on the critical path: 1 (the pre-step alongside)")
        return
    print(f"    model calls on the critical path: {statistics.mode(calls)} (sequential)")
    print(
        f"    pipeline overhead (all but waiting for the model)"
        f"  p50 {statistics.median(overheads):5.1f} ms   p95 {percentile(overheads, 0.95):5.1f} ms"
    )
    print(
        f"    retrieval and rights, overlapped with the pre-step call"
        f"  p50 {statistics.median(grounding):5.1f} ms   p95 {percentile(grounding, 0.95):5.1f} ms"
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=50)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    settings = parse_config(
        CONFIG.format(data_dir=folder).replace(
            "[collections.tickets]", "[collections.tickets]\npublic = true"
        ),
        origin="bench",
        env={},
        base_dir=folder,
    )
    kb = await KnowledgeBase.open(lambda: settings)
    prose = Prose(seed=2)
    base = np.array(
        kb.embedders.get(MODEL).encode([Prose(seed=5).paragraph() for _ in range(2_000)])
    )
    await build_corpus(kb, args.size, prose, base)
    llm = await FakeLlm(delay=LATENCY).start()
    settings_llm = LlmSettings(
        url=llm.url, model="m", max_retries=0, reasoning_opens_in_prompt=False
    )
    client = LlmClient(settings_llm)
    print(
        f"answer pipeline, {args.size:,} chunks, model answering each call after "
        f"{LATENCY * 1000:.0f} ms:"
    )
    for early in (False, True):
        tuned = settings.model_copy(
            update={"pipeline": settings.pipeline.model_copy(update={"early_answer": early})}
        )
        pipeline = AnswerPipeline(client, kb.retriever, kb.rights, lambda s=tuned: s, load_prompts)
        await measure(pipeline, llm, prose, args.questions, early)
    await client.close()
    await llm.close()
    await kb.close()


if __name__ == "__main__":
    asyncio.run(main())
