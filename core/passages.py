"""Search-only answers: the passages that best match a question, with numbered citations
(their text: core/pipeline/quoting.py)."""

from __future__ import annotations

from collections.abc import Callable

from core import strings
from core.config import Settings
from core.knowledge.search.retrieval import Retriever
from core.memory.memory import ConversationMemory
from core.pipeline.grounding import build_audience
from core.pipeline.quoting import build_search_only_answer, fetch_quoted_lines
from core.pipeline.sources import SourcesFinder
from core.requests import Answer, AnswerKind, Progress, Request
from core.rights.checker import RightsChecker
from core.timerange import TimeExpressionFinder


class PassagesAnswerer:
    """Answers with the passages every reader of the room may see (search-only mode):
    documents, then windows of the room's own history; a time in the question filters
    both, as in the LLM pipeline."""

    def __init__(
        self,
        retriever: Retriever,
        rights: RightsChecker,
        settings: Callable[[], Settings],
        memory: ConversationMemory | None = None,
        times: TimeExpressionFinder | None = None,
    ) -> None:
        self.settings = settings
        self.memory = memory
        self.finder = SourcesFinder(retriever, rights, memory, times or TimeExpressionFinder())

    async def answer(self, request: Request, progress: Progress | None = None) -> Answer:
        settings = self.settings()
        audience = build_audience(request, settings)
        found = await self.finder.find(request, request.text, audience, settings)
        if found.unavailable and not found.hits:
            unavailable = strings.SEARCH_UNAVAILABLE
            return Answer(unavailable, "notice", (), found.trace, reason="unavailable")
        quoted = await fetch_quoted_lines(self.memory, request.text, found)
        text, sources, relevant = build_search_only_answer(
            request.text, found, settings.retrieval, quoted
        )
        kind: AnswerKind = "answer" if relevant else "refusal"
        reason = "" if relevant else "nothing_found"
        return Answer(text, kind, sources, found.trace, reason=reason)
