"""Rights decisions per (application, reader, document), for a short time."""

from __future__ import annotations

import time
from collections.abc import Callable

DocumentKey = tuple[str, str]  # (collection, document id)


class DecisionCache:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._decisions: dict[DocumentKey, dict[tuple[str, str], tuple[bool, float]]] = {}

    def get(self, source: str, reader: str, document: DocumentKey) -> bool | None:
        entry = self._decisions.get(document, {}).get((source, reader))
        if entry is None or entry[1] <= self._clock():
            return None
        return entry[0]

    def put(
        self, source: str, reader: str, document: DocumentKey, allowed: bool, ttl: float
    ) -> None:
        if ttl > 0:
            self._decisions.setdefault(document, {})[(source, reader)] = (
                allowed,
                self._clock() + ttl,
            )

    def drop_document(self, collection: str, doc_id: str) -> None:
        """A document changed or went away: its rights must be asked again."""
        self._decisions.pop((collection, doc_id), None)
