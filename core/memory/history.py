"""The rooms' history: windows of each room's dialog, embedded into one Chroma
collection for all rooms, each vector tagged with its room.

A search asks Chroma for the room's own vectors only (a `where` on the room), and keeps
only the windows the memory store has for that room: a room's past never answers in
another room. One collection whatever the number of rooms: embedded Chroma holds a few
files open per collection, and the earlier one-collection-per-room layout ran out of
open files at a few hundred rooms (those collections are moved over once, see
`migrate_room_collections`). The window texts live in the memory store.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from core.config import Settings
from core.knowledge.embedding import Embedders
from core.knowledge.vectors import VectorStore
from core.memory.store import HistoryWindow, MemoryStore
from core.memory.windows import build_window_text, decide_windows

log = logging.getLogger(__name__)

# A room quiet this long has its last lines embedded as a shorter window.
IDLE_SECONDS = 15 * 60


# Dots never occur in knowledge collection names, so the names cannot collide.
HISTORY_COLLECTION = "room.history"


def collection_of(room: str) -> str:
    """The room's collection in the earlier layout; still the prefix of its window ids."""
    return "room." + hashlib.sha256(room.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class HistoryHit:
    window: HistoryWindow
    distance: float


class HistoryIndex:
    def __init__(
        self,
        store: MemoryStore,
        vectors: VectorStore,
        embedders: Embedders,
        settings: Callable[[], Settings],
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.embedders = embedders
        self.settings = settings
        # Per room, only while someone holds or waits for it: thousands of rooms leave
        # nothing behind.
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def _lock(self, room: str) -> asyncio.Lock:
        lock = self._locks.get(room)
        if lock is None:
            lock = self._locks[room] = asyncio.Lock()
        return lock

    def _model(self) -> str:
        return self.settings().knowledge.embedding_model

    async def embed_ready_windows(
        self, room: str, now: float | None = None, *, idle_too: bool = True
    ) -> int:
        """Embed the room's complete windows, and with `idle_too` the last lines of a
        room that went quiet; returns how many windows."""
        async with self._lock(room):
            memory = self.settings().memory
            first, carried = await self.store.window_mark(room)
            lines = await self.store.lines_from(room, first)
            plan = decide_windows(
                lines,
                memory.window_lines,
                memory.window_overlap,
                carried=carried,
                now=time.time() if now is None else now,
                idle_seconds=IDLE_SECONDS if idle_too else float("inf"),
            )
            if not plan.windows:
                return 0
            windows = [
                HistoryWindow(
                    f"{collection_of(room)}-{lines[0].seq}-{lines[-1].seq}",
                    room,
                    lines[0].seq,
                    lines[0].ts,
                    lines[-1].ts,
                    build_window_text(lines),
                    lines[0].link,
                )
                for lines in plan.windows
            ]
            embedder = await asyncio.to_thread(self.embedders.get, self._model())
            vectors = await embedder.embed([w.text for w in windows])
            await asyncio.to_thread(
                self.vectors.upsert,
                HISTORY_COLLECTION,
                self._model(),
                [w.id for w in windows],
                vectors,
                [{"room": room, "start_ts": w.start_ts, "end_ts": w.end_ts} for w in windows],
            )
            await self.store.add_windows(room, windows, plan.next_start, plan.carried)
            return len(windows)

    async def search(
        self,
        room: str,
        query: str,
        k: int,
        max_distance: float,
        between: tuple[float, float] | None = None,
        not_before: float = -math.inf,
    ) -> list[HistoryHit]:
        """The room's windows nearest to `query`, within `max_distance`, starting at
        `not_before` or later and, when given, overlapping the time range `between`."""
        if k == 0:
            return []
        model = self._model()
        async with self._lock(room):  # a window being embedded is part of the history
            if not await self.store.has_windows(room):
                return []
        embedder = await asyncio.to_thread(self.embedders.get, model)
        vector = (await embedder.embed([query]))[0]
        # Chroma returns fewer when the room has fewer windows.
        n = k * 4 if between is None and not_before == -math.inf else 200
        found = await asyncio.to_thread(
            self.vectors.query, HISTORY_COLLECTION, model, vector, n, {"room": room}
        )
        near = [(wid, d) for wid, d in found if d <= max_distance]
        windows = await self.store.windows(room, [wid for wid, _ in near])
        hits = []
        for wid, distance in near:
            window = windows.get(wid)
            if window is None:
                continue
            if between and not (window.end_ts >= between[0] and window.start_ts <= between[1]):
                continue
            if window.start_ts < not_before:
                continue
            hits.append(HistoryHit(window, distance))
        return hits[:k]

    async def migrate_room_collections(self) -> int:
        """Move the windows of the earlier one-collection-per-room layout into the shared
        collection (their vectors as they are) and drop the old collections; returns how
        many rooms were moved. Collections of another embedding model are left alone
        (their windows are not searched until the model is set back)."""
        model = self._model()
        old = {collection_of(room): room for room in await self.store.rooms_with_windows()}
        moved = 0
        for name in await asyncio.to_thread(self.vectors.names):
            room = old.get(name)
            if room is None:
                continue
            made_with, ids, vectors, metadatas = await asyncio.to_thread(self.vectors.entries, name)
            if made_with != model:
                log.warning("a room's history made with %s is left where it is", made_with)
                continue
            tagged = [{**metadata, "room": room} for metadata in metadatas]
            async with self._lock(room):
                await asyncio.to_thread(
                    self.vectors.upsert, HISTORY_COLLECTION, model, ids, vectors, tagged
                )
                await asyncio.to_thread(self.vectors.drop, name)
            moved += 1
        if moved:
            log.info("moved the history of %d rooms into one collection", moved)
        return moved
