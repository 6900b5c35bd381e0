"""Search-only answers: the passages that best match a question, with numbered citations."""

from __future__ import annotations

import time
from collections.abc import Callable

from core import strings
from core.config import Settings
from core.knowledge.documents import Hit, SearchFilters
from core.knowledge.retrieval import Retriever
from core.requests import Answer, Request, Source, TraceStep
from core.rights.checker import RightsChecker
from core.rights.readers import decide_audience

SNIPPET_CHARS = 400
# Retrieve more than shown, so that k passages remain when the rights check denies some.
OVERFETCH = 3


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
    """Answers with the passages every reader of the room may see (search-only mode)."""

    def __init__(
        self, retriever: Retriever, rights: RightsChecker, settings: Callable[[], Settings]
    ) -> None:
        self.retriever = retriever
        self.rights = rights
        self.settings = settings

    async def answer(self, request: Request) -> Answer:
        settings = self.settings()
        audience = decide_audience(
            request.sender,
            request.members,
            is_direct=request.is_direct,
            room_public_only=settings.room(request.room).public_only,
            max_members=settings.rights.max_room_members,
            shared_rooms=request.shared_rooms,
        )
        started = time.perf_counter()
        filters = SearchFilters(public_only=audience.public_only, rooms=audience.rooms)
        hits = await self.retriever.search(request.text, filters, overfetch=OVERFETCH)
        retrieved = time.perf_counter()
        outcome = await self.rights.filter(hits, audience)
        kept = outcome.allowed[: settings.retrieval.top_k]
        trace = (
            TraceStep("retrieve", retrieved - started, {"hits": [h.chunk_id for h in hits]}),
            TraceStep(
                "rights",
                time.perf_counter() - retrieved,
                {
                    "audience": audience.reason,
                    "denied": outcome.denied,
                    "unchecked": outcome.unchecked,
                },
            ),
        )
        text, sources = build_passages_answer(kept)
        if outcome.unchecked:
            text += "\n\n" + strings.SOURCES_UNCHECKED
        return Answer(text=text, kind="answer" if kept else "refusal", sources=sources, trace=trace)
