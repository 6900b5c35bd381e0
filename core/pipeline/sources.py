"""Everything a question is answered from: documents every reader may see, windows of
the room's own history, and the room's memories, searched separately."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar
from zoneinfo import ZoneInfo

from core.config import Settings
from core.ids import RoomID
from core.knowledge.documents import Hit
from core.knowledge.search.retrieval import Retriever
from core.knowledge.search.vectors import KnowledgeUnavailable
from core.memory.history import HistoryHit
from core.memory.memory import ConversationMemory
from core.memory.store import HistoryWindow, Memory
from core.pipeline.grounding import Grounding, fetch_grounding
from core.pipeline.recall import build_history_hit, build_ledger_hit
from core.requests import Request
from core.rights.checker import RightsChecker
from core.rights.readers import Audience
from core.timerange import TimeExpressionFinder, TimeRange
from core.trace import RecallStep, Step

log = logging.getLogger(__name__)
NO_GROUNDING = Grounding([], False, ())
T = TypeVar("T")


async def unless_unavailable(work: Callable[[], Awaitable[T]], empty: T) -> tuple[T, bool]:
    """The search's result, or `empty` and True when Chroma cannot be reached. The search
    starts here, not where it is asked for: a question cancelled before this runs (a
    newer message in the room) leaves no coroutine never awaited behind."""
    try:
        return await work(), False
    except KnowledgeUnavailable as exc:
        log.warning("a search was skipped: %s", exc)
        return empty, True


def decide_own_rooms(request: Request, audience: Audience) -> list[tuple[RoomID, float]]:
    """The room and the rooms it replaced whose own knowledge (memories, history, the
    ledger) every reader may have, each from when they may; never an encrypted one's
    when this room is not (the homeserver would read it here)."""
    found = []
    for room in (request.room, *request.predecessors):
        if room != request.room and room in request.plaintext_only:
            continue
        since = audience.knowledge_since(room)
        if since is not None:
            found.append((room, since))
    return found


@dataclass(frozen=True)
class Sources:
    documents: list[Hit]  # the candidates every reader may see, best first
    history: list[Hit]  # windows of the room's own history
    memories: list[Memory]
    unchecked: bool
    trace: tuple[Step, ...]
    # Chroma could not be reached: documents and history were not searched.
    unavailable: bool = False
    # Passages of encrypted rooms were left out: this room is not encrypted.
    encrypted_left_out: bool = False
    # The windows behind `history`'s hits of the room's discussion (by their chunk_id).
    windows: tuple[HistoryWindow, ...] = ()

    @property
    def hits(self) -> list[Hit]:
        return self.documents + self.history


class SourcesFinder:
    def __init__(
        self,
        retriever: Retriever,
        rights: RightsChecker,
        memory: ConversationMemory | None,
        times: TimeExpressionFinder,
    ) -> None:
        self.retriever = retriever
        self.rights = rights
        self.memory = memory
        self.times = times

    async def find(
        self,
        request: Request,
        question: str,
        audience: Audience,
        settings: Settings,
        translations: Mapping[str, str] | None = None,
    ) -> Sources:
        """The sources for `question`; the documents also for its `translations` (the
        question in the collections' other languages)."""
        timezone = settings.room(request.room).timezone
        now = datetime.now(ZoneInfo(timezone))
        started = time.perf_counter()
        between = await asyncio.to_thread(self.times.find_range, question, now)
        # The room's own knowledge, only what every reader could read said in the room;
        # and that of the rooms it replaced (upgrades), as far as they may have it.
        own_rooms = decide_own_rooms(request, audience)
        # An outage of Chroma is said in the answer; the room's memories still work.
        (grounding, documents_down), (history, history_down) = await asyncio.gather(
            unless_unavailable(
                lambda: self._documents(
                    question, audience, settings, between, request.focus, translations
                ),
                NO_GROUNDING,
            ),
            unless_unavailable(
                lambda: self._history(request, question, settings, between, own_rooms),
                list[HistoryHit](),
            ),
        )
        unavailable = documents_down or history_down
        memories: list[Memory] = []
        if self.memory is not None and settings.memory.memories_in_prompt:
            found = []
            for room, room_since in own_rooms:
                found += await self.memory.memories_for(room, request.sender, room_since)
            memories = sorted(found, key=lambda m: m.created)[-settings.memory.memories_in_prompt :]
        step = RecallStep(
            time.perf_counter() - started,
            (between.expression, *between.as_timestamps()) if between else None,
            tuple((h.window.id, round(h.distance, 3)) for h in history),
            tuple(m.id for m in memories),
        )
        windows = [build_history_hit(h, timezone) for h in history]
        if self.memory is not None and own_rooms and settings.room(request.room).history:
            entries = []
            for room, room_since in own_rooms:
                entries += await self.memory.ledger_for(
                    room, question, room_since, settings.memory.history_top_k
                )
            windows += [build_ledger_hit(entry, request.room, timezone) for entry in entries]
        trace = (*grounding.trace, step)
        return Sources(
            grounding.hits,
            windows,
            memories,
            grounding.unchecked,
            trace,
            unavailable=unavailable,
            encrypted_left_out=grounding.encrypted_left_out,
            windows=tuple(h.window for h in history),
        )

    async def _documents(
        self,
        question: str,
        audience: Audience,
        settings: Settings,
        between: TimeRange | None,
        focus: tuple[str, str] | None = None,
        translations: Mapping[str, str] | None = None,
    ) -> Grounding:
        return await fetch_grounding(
            self.retriever,
            self.rights,
            question,
            audience,
            settings.retrieval.context_candidates,
            between.as_timestamps() if between else None,
            focus,
            translations,
        )

    async def _history(
        self,
        request: Request,
        question: str,
        settings: Settings,
        between: TimeRange | None,
        own_rooms: list[tuple[RoomID, float]],
    ) -> list[HistoryHit]:
        if self.memory is None or self.memory.history is None or not own_rooms:
            return []
        if not settings.room(request.room).history:
            return []
        found: list[HistoryHit] = []
        for room, since in own_rooms:
            found += await self.memory.history.search(
                room,
                question,
                settings.memory.history_top_k,
                settings.memory.history_max_distance,
                between.as_timestamps() if between else None,
                not_before=since,
            )
        return sorted(found, key=lambda hit: hit.distance)[: settings.memory.history_top_k]
