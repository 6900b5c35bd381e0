"""Retrieval bounded by rights: the passages every reader of the answer may see."""

from __future__ import annotations

import time
from dataclasses import dataclass

from core.config import Settings
from core.knowledge.documents import Hit, SearchFilters
from core.knowledge.retrieval import Retriever
from core.requests import Request
from core.rights.checker import RightsChecker
from core.rights.readers import ALWAYS, Audience, decide_audience
from core.trace import RetrieveStep, RightsStep, Step

# Retrieve more than shown, so that k passages remain when the rights check denies some.
OVERFETCH = 3


@dataclass(frozen=True)
class Grounding:
    hits: list[Hit]
    unchecked: bool
    trace: tuple[Step, ...]


async def fetch_grounding(
    retriever: Retriever,
    rights: RightsChecker,
    question: str,
    audience: Audience,
    k: int,
    between: tuple[float, float] | None = None,
) -> Grounding:
    """The best passages every reader may see; dated documents must meet `between`."""
    started = time.perf_counter()
    filters = SearchFilters(
        public_only=audience.public_only,
        rooms=tuple(room for room, _ in audience.rooms),
        rooms_since=tuple((room, since) for room, since in audience.rooms if since > ALWAYS),
        dated_between=between,
    )
    hits = await retriever.search(question, filters, k=k, overfetch=OVERFETCH)
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
    return Grounding(outcome.allowed[:k], outcome.unchecked, trace)


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
    )
