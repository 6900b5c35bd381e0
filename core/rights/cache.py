"""Rights decisions per (application, reader, document version), for a short time.

A decision holds for the version of the document it was made for: when any process
replaces the document, every process's next retrieval carries the new version (from the
shared catalog), misses here, and asks the application again.
"""

from __future__ import annotations

import time
from collections.abc import Callable

DocumentKey = tuple[str, str]  # (collection, document id)


# Expired decisions are swept out when the cache has grown to this many documents (and
# again each time it doubles from what the sweep left).
SWEEP_AT = 10_000


class DecisionCache:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        # Seconds, only ever compared with each other: tests move it on instead of waiting.
        self.clock = clock
        self._sweep_at = SWEEP_AT
        # document -> (application, reader) -> (version, allowed, until)
        self._decisions: dict[DocumentKey, dict[tuple[str, str], tuple[str, bool, float]]] = {}

    def get(self, source: str, reader: str, document: DocumentKey, revision: str) -> bool | None:
        entry = self._decisions.get(document, {}).get((source, reader))
        if entry is None or entry[0] != revision or entry[2] <= self.clock():
            return None
        return entry[1]

    def put(
        self,
        source: str,
        reader: str,
        document: DocumentKey,
        revision: str,
        allowed: bool,
        ttl: float,
    ) -> None:
        if ttl <= 0:
            return
        self._decisions.setdefault(document, {})[(source, reader)] = (
            revision,
            allowed,
            self.clock() + ttl,
        )
        if len(self._decisions) >= self._sweep_at:
            self._sweep()

    def _sweep(self) -> None:
        now = self.clock()
        for document in list(self._decisions):
            live = {k: v for k, v in self._decisions[document].items() if v[2] > now}
            if live:
                self._decisions[document] = live
            else:
                del self._decisions[document]
        self._sweep_at = max(SWEEP_AT, 2 * len(self._decisions))

    def __len__(self) -> int:
        return len(self._decisions)

    def drop_document(self, collection: str, doc_id: str) -> None:
        """A document changed or went away: its decisions are of no more use."""
        self._decisions.pop((collection, doc_id), None)
