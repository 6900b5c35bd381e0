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
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace

from core.config import Settings
from core.history.line_store import RoomLine
from core.history.windows import build_window_text, decide_windows
from core.knowledge.search.embedding import Embedders, calibrate
from core.knowledge.search.vectors import VectorStore
from core.memory.store import HistoryWindow, MemoryStore

log = logging.getLogger(__name__)

# Redacted messages remembered, for lines that arrive after their redaction.
MAX_REDACTED = 10_000
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
        # Messages redacted lately: a line of one that arrives after its redaction (its
        # history task was still under way) is not added.
        self._redacted: OrderedDict[str, None] = OrderedDict()

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
                    lines[-1].seq,
                )
                for lines in plan.windows
            ]
            await self._replace_vectors(room, windows, [])
            await self.store.add_windows(room, windows, plan.next_start, plan.carried)
            return len(windows)

    async def add_line(self, room: str, line: RoomLine, *, spoken: bool = False) -> None:
        """Keep a line of the room (a voice message's transcript when `spoken`), unless
        its message was redacted already."""
        async with self._lock(room):
            if line.event_id not in self._redacted:
                await self.store.add_line(room, line, spoken=spoken)

    async def follow(
        self, room: str, event_id: str, text: str | None, sender: str = "", edit: str = ""
    ) -> int:
        """A message of the room was edited by its `sender` (`text`: its new text) or
        redacted (None): its line changes, and every embedded window that holds it is
        rebuilt from its lines as they are now, or removed when none is left. The stored
        texts change first: a search reads them, so with Chroma away (the vectors are
        then updated by nothing) a redacted line is still never shown. Returns how many
        windows changed."""
        async with self._lock(room):
            if text is None:
                self._redacted[event_id] = None
                while len(self._redacted) > MAX_REDACTED:
                    self._redacted.popitem(last=False)
            seq = await self.store.change_line(room, event_id, text, sender, edit)
            if seq is None:
                return 0
            windows = await self.store.windows_with(room, seq)
            rebuilt: list[HistoryWindow] = []
            dropped: list[str] = []
            for window in windows:
                lines = await self.store.lines_between(room, window.first_seq, window.last_seq)
                if not lines:
                    await self.store.drop_window(room, window.id)
                    dropped.append(window.id)
                    continue
                rebuilt.append(
                    replace(
                        window,
                        start_ts=lines[0].ts,
                        end_ts=lines[-1].ts,
                        text=build_window_text(lines),
                        link=lines[0].link,
                    )
                )
                await self.store.put_window(rebuilt[-1])
            try:
                await self._replace_vectors(room, rebuilt, dropped)
            except Exception:
                # The stored texts are right already, and searches read those: a stale
                # vector only ranks a window. Nothing here may stop the sync.
                log.exception("a changed message's history vectors were not replaced")
            return len(windows)

    async def forget_legacy(self, room: str, ts: float) -> int:
        """A message said at `ts` was redacted: windows of an earlier release (which kept
        no lines to rebuild them from) that span it are removed."""
        async with self._lock(room):
            dropped = await self.store.drop_legacy_windows(room, ts)
        if dropped:
            await asyncio.to_thread(
                self.vectors.delete_ids, HISTORY_COLLECTION, self._model(), dropped
            )
        return len(dropped)

    async def purge_before(self, room: str, cutoff: float) -> int:
        """Forget the room's dialog from before `cutoff` (its retention): lines, windows
        and their vectors. Returns how many windows."""
        async with self._lock(room):
            dropped = await self.store.purge_before(room, cutoff)
            await asyncio.to_thread(
                self.vectors.delete_ids, HISTORY_COLLECTION, self._model(), dropped
            )
            return len(dropped)

    async def _replace_vectors(
        self, room: str, windows: list[HistoryWindow], dropped: list[str]
    ) -> None:
        model = self._model()
        await asyncio.to_thread(self.vectors.delete_ids, HISTORY_COLLECTION, model, dropped)
        if not windows:
            return
        embedder = await asyncio.to_thread(self.embedders.get, model)
        vectors = await embedder.embed_passages([w.text for w in windows])
        await asyncio.to_thread(
            self.vectors.upsert,
            HISTORY_COLLECTION,
            model,
            [w.id for w in windows],
            vectors,
            [{"room": room, "start_ts": w.start_ts, "end_ts": w.end_ts} for w in windows],
        )

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
        vector = (await embedder.embed_queries([query]))[0]
        # Chroma returns fewer when the room has fewer windows.
        n = k * 4 if between is None and not_before == -math.inf else 200
        found = await asyncio.to_thread(
            self.vectors.query, HISTORY_COLLECTION, model, vector, n, {"room": room}
        )
        # A room's messages are in any language and the rooms' thresholds were set on
        # one pair for both: a question is read as in another language (e5's second
        # pair, about its pooled one of before 2026-11-30), not as in the messages'.
        anchors = embedder.calibration.of(True)
        found = [(wid, calibrate(d, anchors)) for wid, d in found]
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
