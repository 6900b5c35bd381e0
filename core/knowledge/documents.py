"""Documents as source applications send them, and the chunks and hits made from them."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
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

    def content_hash(self) -> str:
        """Changes whenever anything stored with the chunks would change."""
        fields = asdict(self)
        fields.pop("collection")
        fields.pop("id")
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:32]


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
