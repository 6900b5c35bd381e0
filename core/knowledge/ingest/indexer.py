"""Putting documents into a collection and taking them out, without ever showing half of one.

A changed document is chunked and embedded, its new chunks are written to Chroma, then
the catalog swaps the document's version in one transaction, then Chroma drops the old
chunks. A crash at any point leaves either the old or the new version visible, never a
mix: the catalog only lists the chunks of the current version, and leftovers in Chroma
are never returned (they are removed the next time the document changes).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from core.config import Settings
from core.config.knowledge import CollectionSettings
from core.knowledge.documents import Chunk, Document
from core.knowledge.parse.chunking import build_chunks
from core.knowledge.parse.text_tools import SentenceSplitter
from core.knowledge.search.catalog import Catalog, ChunkRow, DocumentRecord
from core.knowledge.search.embedding import Embedder, Embedders
from core.knowledge.search.vectors import VectorStore

Status = Literal["indexed", "unchanged", "deleted", "absent"]


class UnknownCollection(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(f"there is no collection {name!r} in the config")
        self.name = name


@dataclass(frozen=True)
class Outcome:
    collection: str
    doc_id: str
    status: Status
    chunks: int = 0


@dataclass(frozen=True)
class _Prepared:
    document: Document
    collection: CollectionSettings
    embedder: Embedder
    content_hash: str
    chunks: list[Chunk]


def build_vector_metadata(
    collection: str,
    doc_id: str,
    source: str,
    title: str,
    url: str,
    language: str,
    version: str,
    room: str,
    public: bool,
    content_hash: str,
    updated_at: float,
) -> dict[str, Any]:
    """What Chroma keeps beside a chunk's vector (its position and heading are added)."""
    return {
        "collection": collection,
        "doc_id": doc_id,
        "source": source,
        "title": title,
        "url": url,
        "language": language,
        "version": version,
        "room": room,
        "public": public,
        "content_hash": content_hash,
        "updated_at": updated_at,
    }


class Indexer:
    def __init__(
        self,
        catalog: Catalog,
        vectors: VectorStore,
        embedders: Embedders,
        splitter: SentenceSplitter,
        settings: Callable[[], Settings],
        on_change: Callable[[str, str], None] = lambda collection, doc_id: None,
    ) -> None:
        self.on_change = on_change
        self.catalog = catalog
        self.vectors = vectors
        self.embedders = embedders
        self.splitter = splitter
        self.settings = settings

    def collection(self, name: str) -> CollectionSettings:
        collection = self.settings().collections.get(name)
        if collection is None:
            raise UnknownCollection(name)
        return collection

    async def decide(self, document: Document) -> Literal["new", "changed", "unchanged"]:
        """What putting this document would do, without doing it."""
        self.collection(document.collection)
        current = await self.catalog.document(document.collection, document.id)
        if current is None:
            return "new"
        return "unchanged" if current.content_hash == document.content_hash() else "changed"

    def _prepare(self, document: Document) -> _Prepared:
        collection = self.collection(document.collection)
        embedder = self.embedders.get(self.settings().embedding_model_of(document.collection))
        chunks = build_chunks(
            document.content,
            document.format,
            budget=collection.chunk_tokens,
            overlap=collection.chunk_overlap,
            count=embedder.count_tokens,
            sentences=self.splitter,
            title=document.title,
            limit=embedder.max_tokens,
        )
        return _Prepared(document, collection, embedder, document.content_hash(), chunks)

    async def put_many(self, documents: list[Document]) -> list[Outcome]:
        """Index documents (one version each); chunks of all of them are embedded together."""
        outcomes: dict[int, Outcome] = {}
        prepared: list[tuple[int, _Prepared]] = []
        for index, document in enumerate(documents):
            if await self.decide(document) == "unchanged":
                outcomes[index] = Outcome(document.collection, document.id, "unchanged")
            else:
                prepared.append((index, await asyncio.to_thread(self._prepare, document)))

        by_model: dict[str, list[tuple[int, _Prepared]]] = {}
        for pair in prepared:
            by_model.setdefault(pair[1].embedder.name, []).append(pair)
        for group in by_model.values():
            texts = [c.embedding_text(p.document.title) for _, p in group for c in p.chunks]
            vectors = iter(await group[0][1].embedder.embed_passages(texts))
            for index, item in group:
                await self._store(item, [next(vectors) for _ in item.chunks])
                outcomes[index] = Outcome(
                    item.document.collection, item.document.id, "indexed", len(item.chunks)
                )
        return [outcomes[index] for index in range(len(documents))]

    async def _store(self, item: _Prepared, vectors: list[list[float]]) -> None:
        document, content_hash = item.document, item.content_hash
        updated_at = time.time()
        prefix = f"{document.collection}/{document.id}#{content_hash[:16]}"
        ids = [f"{prefix}#{c.position}" for c in item.chunks]
        metadata = build_vector_metadata(
            document.collection,
            document.id,
            item.collection.source,
            document.title,
            document.url,
            document.language,
            document.version,
            document.room,
            item.collection.public,
            content_hash,
            updated_at,
        )
        model = item.embedder.name
        await asyncio.to_thread(
            self.vectors.upsert,
            document.collection,
            model,
            ids,
            vectors,
            [{**metadata, "position": c.position, "heading": c.heading} for c in item.chunks],
        )
        record = DocumentRecord(
            document.collection,
            document.id,
            item.collection.source,
            document.title,
            document.url,
            document.language,
            document.version,
            document.room,
            item.collection.public,
            content_hash,
            len(item.chunks),
            updated_at,
            document.encrypted,
        )
        rows = [
            ChunkRow(i, c.position, c.heading, c.text)
            for i, c in zip(ids, item.chunks, strict=True)
        ]
        await self.catalog.replace_document(record, rows, document.dates())
        self.on_change(document.collection, document.id)
        await asyncio.to_thread(
            self.vectors.delete_document, document.collection, model, document.id, content_hash
        )

    async def delete(self, collection_name: str, doc_id: str) -> Outcome:
        self.collection(collection_name)  # raises UnknownCollection
        existed = await self.catalog.delete_document(collection_name, doc_id)
        self.on_change(collection_name, doc_id)
        await asyncio.to_thread(
            self.vectors.delete_document,
            collection_name,
            self.settings().embedding_model_of(collection_name),
            doc_id,
        )
        return Outcome(collection_name, doc_id, "deleted" if existed else "absent")
