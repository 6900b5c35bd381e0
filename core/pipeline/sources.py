"""Everything a question is answered from: documents every reader may see, windows of
the room's own history, and the room's memories, searched separately."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from core.config import Settings
from core.knowledge.documents import Hit
from core.knowledge.retrieval import Retriever
from core.memory.history import HistoryHit
from core.memory.memory import ConversationMemory
from core.memory.store import Memory
from core.pipeline.grounding import fetch_grounding
from core.pipeline.recall import build_history_hit
from core.requests import Request, TraceStep
from core.rights.checker import RightsChecker
from core.rights.readers import Audience
from core.timerange import TimeExpressionFinder, TimeRange


@dataclass(frozen=True)
class Sources:
    hits: list[Hit]  # documents first, then the room's history
    memories: list[Memory]
    unchecked: bool
    trace: tuple[TraceStep, ...]


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
        self, request: Request, question: str, audience: Audience, settings: Settings
    ) -> Sources:
        timezone = settings.room(request.room).timezone
        now = datetime.now(ZoneInfo(timezone))
        started = time.perf_counter()
        between = await asyncio.to_thread(self.times.find_range, question, now)
        # The room's own knowledge, only what every reader could read said in the room.
        since = audience.knowledge_since(request.room)
        grounding, history = await asyncio.gather(
            fetch_grounding(
                self.retriever,
                self.rights,
                question,
                audience,
                settings.retrieval.top_k,
                between.as_timestamps() if between else None,
            ),
            self._history(request, question, settings, between, since),
        )
        memories: list[Memory] = []
        if self.memory is not None and settings.memory.memories_in_prompt and since is not None:
            found = self.memory.memories_for(request.room, request.sender, since)
            memories = found[-settings.memory.memories_in_prompt :]
        step = TraceStep(
            "recall",
            time.perf_counter() - started,
            {
                "time_range": between and [between.expression, *between.as_timestamps()],
                "history": [(h.window.id, round(h.distance, 3)) for h in history],
                "memories": [m.id for m in memories],
            },
        )
        hits = grounding.hits + [build_history_hit(h, timezone) for h in history]
        return Sources(hits, memories, grounding.unchecked, (*grounding.trace, step))

    async def _history(
        self,
        request: Request,
        question: str,
        settings: Settings,
        between: TimeRange | None,
        since: float | None,
    ) -> list[HistoryHit]:
        if self.memory is None or self.memory.history is None or since is None:
            return []
        if not settings.room(request.room).history:
            return []
        return await self.memory.history.search(
            request.room,
            question,
            settings.memory.history_top_k,
            settings.memory.history_max_distance,
            between.as_timestamps() if between else None,
            not_before=since,
        )
