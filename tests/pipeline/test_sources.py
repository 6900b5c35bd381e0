"""The sources of an answer: a search that is cancelled or cannot reach Chroma."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine

from core.knowledge.search.vectors import KnowledgeUnavailable
from core.pipeline.sources import unless_unavailable


async def test_an_unreachable_search_gives_its_empty_result_and_says_so():
    async def search() -> list[str]:
        raise KnowledgeUnavailable("chroma is down")

    assert await unless_unavailable(search, []) == ([], True)


async def test_a_search_cancelled_before_it_starts_is_never_begun():
    # A newer message cancels the question at once: the search is not even created, so
    # no coroutine is left never awaited (a RuntimeWarning in the logs).
    created: list[str] = []

    async def search() -> list[str]:
        return ["hit"]

    def start() -> Coroutine[None, None, list[str]]:
        created.append("search")
        return search()

    task = asyncio.ensure_future(unless_unavailable(start, []))
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled() and created == []
    assert await unless_unavailable(start, []) == (["hit"], False)
