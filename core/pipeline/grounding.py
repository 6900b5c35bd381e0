"""Retrieval bounded by rights: the passages every reader of the answer may see."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

from core.config import Settings
from core.knowledge.documents import Hit, SearchFilters
from core.knowledge.search.retrieval import Retriever, build_hit
from core.pipeline.context import passage_cost
from core.pipeline.filling import build_context_hits, key_of
from core.requests import Request
from core.rights.checker import RightsChecker
from core.rights.readers import ALWAYS, Audience, decide_audience
from core.trace import RetrieveStep, RightsStep, Step

# Retrieve more than shown, so that k passages remain when the rights check denies some.
OVERFETCH = 3
FOCUS_BOOST = 1.0


@dataclass(frozen=True)
class Grounding:
    hits: list[Hit]
    unchecked: bool
    trace: tuple[Step, ...]
    # Passages of encrypted rooms were found and left out: the answer's room is not
    # encrypted (see `decide_postable`).
    encrypted_left_out: bool = False


def decide_postable(hit: Hit, plaintext_only: tuple[str, ...]) -> bool:
    """Whether a passage may be posted in the answer's room as far as encryption goes:
    a room's document written while its room was encrypted (or of unknown state) may
    not reach a room the homeserver reads."""
    return hit.room not in plaintext_only or hit.encrypted is False


async def fetch_grounding(
    retriever: Retriever,
    rights: RightsChecker,
    question: str,
    audience: Audience,
    k: int,
    between: tuple[float, float] | None = None,
    focus: tuple[str, str] | None = None,
    translations: Mapping[str, str] | None = None,
) -> Grounding:
    """The best passages every reader may see; dated documents must meet `between`. The
    passages of `focus` (a document the question is about) come first, under the same
    filters and rights as any. `translations`: the question in other languages."""
    started = time.perf_counter()
    filters = SearchFilters(
        public_only=audience.public_only,
        rooms=tuple(room for room, _ in audience.rooms),
        rooms_since=tuple((room, since) for room, since in audience.rooms if since > ALWAYS),
        dated_between=between,
    )
    found = await retriever.search(
        question, filters, k=k, overfetch=OVERFETCH, translations=translations
    )
    if focus is not None:
        first = await retriever.search(
            question,
            replace(filters, documents=(focus,)),
            k=k,
            overfetch=OVERFETCH,
            translations=translations,
        )
        # Ranked above any other (fused scores are below 1), so the model reads them first.
        first = [replace(hit, score=hit.score + FOCUS_BOOST) for hit in first]
        found = first + [hit for hit in found if hit.chunk_id not in {h.chunk_id for h in first}]
    hits = [hit for hit in found if decide_postable(hit, audience.plaintext_only)]
    retrieved = time.perf_counter()
    outcome = await rights.filter(hits, audience)
    trace = (
        RetrieveStep(retrieved - started, question, tuple(h.chunk_id for h in hits)),
        RightsStep(
            time.perf_counter() - retrieved,
            audience.reason,
            tuple(h.chunk_id for h in hits if h not in outcome.allowed),
            outcome.unchecked,
        ),
    )
    left_out = len(hits) < len(found)
    return Grounding(outcome.allowed[:k], outcome.unchecked, trace, left_out)


async def fetch_context_hits(retriever: Retriever, hits: list[Hit], budget: int) -> list[Hit]:
    """The passages the model gets (see `build_context_hits`), with the neighbours of
    these hits read from the catalog: only of the same document version, so a passage
    never mixes two versions, and only of documents the rights check allowed."""
    wanted: dict[tuple[str, str, str], set[int]] = {}
    for hit in hits:
        around = {hit.position - 1, hit.position + 1} - {-1}
        wanted.setdefault((hit.collection, hit.document_id, hit.revision), set()).update(around)
    neighbours = {}
    for (collection, doc_id, revision), positions in wanted.items():
        for row in await retriever.catalog.chunks_at(collection, doc_id, sorted(positions)):
            found = build_hit(row, retriever.settings().collections[collection].public)
            if found.revision == revision:
                neighbours[key_of(found)] = found
    return build_context_hits(hits, neighbours, budget, passage_cost)


def build_audience(request: Request, settings: Settings) -> Audience:
    """Everyone who will read the answer to this request, as the config bounds them."""
    return decide_audience(
        request.sender,
        request.readers,
        is_direct=request.is_direct,
        room_public_only=settings.room(request.room).public_only,
        open_room=request.open_room,
        max_members=settings.rights.max_room_members,
        rooms=request.knowledge,
        plaintext_only=request.plaintext_only,
    )
