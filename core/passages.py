"""Search-only answers: the passages that best match a question, with numbered citations."""

from __future__ import annotations

import time

from core import strings
from core.knowledge.documents import Hit, SearchFilters
from core.knowledge.retrieval import Retriever
from core.requests import Answer, Request, Source, TraceStep

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
            sources.append(Source(hit.title, hit.url or None, hit.collection, hit.document_id))
        parts.append(f"> {build_snippet(hit.text)} [{numbers[key]}]")
    return "\n\n".join(parts), tuple(sources)


class PassagesAnswerer:
    """Answers with passages from public collections only.

    Until rights are checked with the source applications, a room may only see what
    everyone may see: non-public collections are never searched here (fail closed).
    """

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever

    async def answer(self, request: Request) -> Answer:
        started = time.perf_counter()
        hits = await self.retriever.search(request.text, SearchFilters(public_only=True))
        step = TraceStep(
            name="retrieve",
            seconds=time.perf_counter() - started,
            details={"hits": [(h.chunk_id, round(h.score, 5)) for h in hits]},
        )
        text, sources = build_passages_answer(hits)
        kind = "answer" if hits else "refusal"
        return Answer(text=text, kind=kind, sources=sources, trace=(step,))
