"""Search-only answers: the passages that best match a question, with numbered citations."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from core import strings
from core.config import Settings
from core.knowledge.documents import Hit
from core.knowledge.keywords import parse_query_words
from core.knowledge.retrieval import Retriever
from core.memory.memory import ConversationMemory
from core.memory.store import Memory
from core.pipeline.filling import decide_relevant_hits
from core.pipeline.grounding import build_audience
from core.pipeline.sources import SourcesFinder
from core.requests import Answer, AnswerKind, Progress, Request, Source
from core.rights.checker import RightsChecker
from core.sources import build_source
from core.timerange import TimeExpressionFinder

SNIPPET_CHARS = 400
MEMORIES_SHOWN = 3


def build_snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"


def decide_relevant_memories(
    question: str, memories: Sequence[Memory], limit: int = MEMORIES_SHOWN
) -> list[Memory]:
    """The room's memories that share a word (not a stop word) with the question, most
    shared words first, then newest: without a model, word overlap stands for relevance."""
    asked = set(parse_query_words(question))
    scored = [(len(asked & set(parse_query_words(m.text))), n, m) for n, m in enumerate(memories)]
    ranked = sorted((item for item in scored if item[0]), key=lambda i: (-i[0], -i[1]))
    return [memory for _, _, memory in ranked[:limit]]


def build_passages_answer(
    hits: list[Hit], memories: Sequence[Memory] = ()
) -> tuple[str, tuple[Source, ...]]:
    """The answer text (what the room remembers, then quoted passages, each with its
    source number) and the sources."""
    if not hits and not memories:
        return strings.NOTHING_FOUND, ()
    numbers: dict[tuple[str, str], int] = {}
    sources: list[Source] = []
    parts = [strings.SEARCH_ONLY_INTRO]
    if memories:
        parts.append(strings.SEARCH_ONLY_MEMORIES)
        parts += [f"> {build_snippet(memory.text)}" for memory in memories]
    for hit in hits:
        key = (hit.collection, hit.document_id)
        if key not in numbers:
            numbers[key] = len(sources) + 1
            shown = [h for h in hits if (h.collection, h.document_id) == key]
            sources.append(build_source(hit, shown))
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
        memories = decide_relevant_memories(request.text, found.memories)
        retrieval = settings.retrieval
        shown = (
            decide_relevant_hits(
                found.documents,
                retrieval.top_k,
                near=retrieval.passage_near_distance,
                max_distance=retrieval.passage_max_distance,
                relative=retrieval.passage_relative_distance,
            )
            + found.history
        )
        text, sources = build_passages_answer(shown, memories)
        if found.unchecked:
            text += "\n\n" + strings.SOURCES_UNCHECKED
        if found.encrypted_left_out:
            text += "\n\n" + strings.ENCRYPTED_LEFT_OUT
        kind: AnswerKind = "answer" if shown or memories else "refusal"
        reason = "" if shown or memories else "nothing_found"
        return Answer(text, kind, sources, found.trace, reason=reason)
