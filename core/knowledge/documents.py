"""Documents as source applications send them, and the chunks and hits made from them."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal

DocumentFormat = Literal["markdown", "text", "html"]
FORMATS: tuple[str, ...] = ("markdown", "text", "html")


@dataclass(frozen=True)
class Document:
    collection: str
    id: str
    title: str
    content: str
    format: DocumentFormat = "markdown"
    url: str = ""
    language: str = ""
    version: str = ""
    room: str = ""
    # What the content is about in time (ISO 8601), such as a meeting's day or the period
    # a summary covers: a question with a time expression keeps dated documents only
    # when their range meets its range. Undated documents are never left out.
    date: str = ""
    date_end: str = ""

    def dates(self) -> tuple[float, float] | None:
        return parse_document_dates(self.date, self.date_end)

    def content_hash(self) -> str:
        """Changes whenever anything stored with the chunks would change."""
        fields = asdict(self)
        fields.pop("collection")
        fields.pop("id")
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:32]


def _moment(text: str, end: bool) -> float:
    """A timestamp from ISO 8601; a bare day means all of it (UTC when no zone is given)."""
    if len(text) == 10:
        day = datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC)
        return (day + timedelta(days=1) if end else day).timestamp()
    moment = datetime.fromisoformat(text)
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def parse_document_dates(start: str, end: str = "") -> tuple[float, float] | None:
    """The range a document's `date` and `date_end` span; ValueError when unreadable."""
    if not start:
        if end:
            raise ValueError("date_end needs a date")
        return None
    first, last = _moment(start, end=False), _moment(end or start, end=True)
    if last < first:
        raise ValueError("date_end is before date")
    return first, last


@dataclass(frozen=True)
class Chunk:
    position: int
    text: str
    heading: str
    tokens: int

    def embedding_text(self, title: str) -> str:
        """The title and section travel with the passage, so that it is found in context."""
        return "\n".join(part for part in (title, self.heading, self.text) if part)


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk with everything needed to cite it."""

    chunk_id: str
    collection: str
    document_id: str
    source: str
    title: str
    url: str
    heading: str
    text: str
    position: int
    public: bool
    score: float
    room: str = ""
    vector_rank: int | None = None
    keyword_rank: int | None = None
    distance: float | None = None


@dataclass(frozen=True)
class SearchFilters:
    """Which chunks a search may return. Room-owned documents (summaries) are left out
    unless their room is listed: the default returns none of them."""

    collections: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    public_only: bool = False
    rooms: tuple[str, ...] = ()
    updated_after: float | None = None
    updated_before: float | None = None
    # Dated documents must meet this range (timestamps, the end excluded, as a document's
    # own end is); undated ones always pass.
    dated_between: tuple[float, float] | None = None
