"""The entry point that turns a Request into an Answer.

The Matrix side depends only on the Answerer protocol; the LLM pipeline
(core/pipeline/answer.py) and the search-only answers (core/passages.py) implement it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from core import strings
from core.config import Settings
from core.predetermined import decide_predetermined
from core.requests import Answer, Progress, Request
from core.trace import ParseStep, PredeterminedStep


class Answerer(Protocol):
    async def answer(self, request: Request, progress: Progress | None = None) -> Answer:
        """Answer one question, reporting the text so far to `progress` while it is written.
        Raise only for failures the caller reports as an error."""
        ...


class NoKnowledgeAnswerer:
    """Stands in while no knowledge collection exists: echoes the parsed question."""

    async def answer(self, request: Request, progress: Progress | None = None) -> Answer:
        started = time.perf_counter()
        text = strings.NO_KNOWLEDGE_YET.format(question=request.text.replace("\n", " "))
        step = ParseStep(time.perf_counter() - started, request.text, len(request.recent))
        return Answer(text=text, kind="notice", trace=(step,))


class PredeterminedFirst:
    """Answers fixed by admins come before anything else, with no search and no LLM."""

    def __init__(self, inner: Answerer, settings: Callable[[], Settings]) -> None:
        self.inner = inner
        self.settings = settings

    async def answer(self, request: Request, progress: Progress | None = None) -> Answer:
        fixed = decide_predetermined(request.text, self.settings().predetermined)
        if fixed is None:
            return await self.inner.answer(request, progress)
        return Answer(text=fixed, trace=(PredeterminedStep(0.0),))
