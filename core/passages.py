"""Search-only answers: the passages that best match a question, with numbered citations."""

from __future__ import annotations

from collections.abc import Callable

from core import strings
from core.config import Settings
from core.knowledge.documents import Hit
from core.knowledge.retrieval import Retriever
from core.memory.memory import ConversationMemory
from core.pipeline.grounding import build_audience
from core.pipeline.sources import SourcesFinder
from core.requests import Answer, AnswerKind, Progress, Request, Source
from core.rights.checker import RightsChecker
from core.timerange import TimeExpressionFinder

SNIPPET_CHARS = 400


def build_snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"


def build_passages_answer(hits: list[Hit]) -> tuple[str, tuple[Source, ...]]:
    """The answer text (quoted passages, each with its source number) and the sources."""
    if not hits:
        return strings.NOTHING_FOUND, ()
    numbers: dict[tuple[str, str], int] = {}
    sources: list[Source] = []
    parts = [strings.SEARCH_ONLY_INTRO]
    for hit in hits:
        key = (hit.collection, hit.document_id)
        if key not in numbers:
            numbers[key] = len(sources) + 1
            sources.append(
                Source(hit.title, hit.url or None, hit.collection, hit.document_id, hit.score)
            )
        parts.append(f"> {build_snippet(hit.text)} [{numbers[key]}]")
    return "\n\n".join(parts), tuple(sources)


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
        self.finder = SourcesFinder(retriever, rights, memory, times or TimeExpressionFinder())

    async def answer(self, request: Request, progress: Progress | None = None) -> Answer:
        settings = self.settings()
        audience = build_audience(request, settings)
        found = await self.finder.find(request, request.text, audience, settings)
        if found.unavailable and not found.hits:
            unavailable = strings.SEARCH_UNAVAILABLE
            return Answer(unavailable, "notice", (), found.trace, reason="unavailable")
        text, sources = build_passages_answer(found.hits)
        if found.unchecked:
            text += "\n\n" + strings.SOURCES_UNCHECKED
        kind: AnswerKind = "answer" if found.hits else "refusal"
        reason = "" if found.hits else "nothing_found"
        return Answer(text, kind, sources, found.trace, reason=reason)
