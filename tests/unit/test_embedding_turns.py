"""A question asked while a long document is embedded waits for one turn of its
passages, not for the whole document (core/knowledge/search/embedding.run_in_turns)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from core.knowledge.search.embedding import run_in_turns


async def test_a_question_is_embedded_between_two_turns_of_a_long_document():
    thread = ThreadPoolExecutor(max_workers=1)
    started, go_on = threading.Event(), threading.Event()
    done: list[str] = []

    def encode(texts: list[str]) -> list[list[float]]:
        if texts[0] == "p0":  # the question arrives while the first turn runs
            started.set()
            go_on.wait(timeout=10)
        done.extend(texts)
        return [[float(len(text))] for text in texts]

    passages = [f"p{i}" for i in range(40)]
    document = asyncio.ensure_future(run_in_turns(thread, encode, passages, 8))
    await asyncio.to_thread(started.wait, 10)
    question = asyncio.ensure_future(run_in_turns(thread, encode, ["question?"], 8))
    await asyncio.sleep(0)  # the question's call is queued on the model's thread
    go_on.set()
    assert await question == [[9.0]]
    assert not document.done() and done.index("question?") == 8, "after one turn"
    assert await document == [[float(len(p))] for p in passages], "in order, all of them"
    thread.shutdown()
