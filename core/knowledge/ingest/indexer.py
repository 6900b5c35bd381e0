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

# The most chunks written to Chroma in one request.
UPSERT_BATCH = 1000
# The most documents whose other versions are removed from Chroma in one request.
DELETE_BATCH = 100

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


def decide_unrepeated(chunks: list[Chunk]) -> list[Chunk]:
    """The chunks, each passage said again word for word under the same heading left
    out (their positions stay). A repeat adds nothing to find, and many identical
    vectors blind Chroma's index (HNSW) to the rest of the collection: a document of
    one paragraph 900 times over hid every other page from every question."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for chunk in chunks:
        if (chunk.heading, chunk.text) not in seen:
            seen.add((chunk.heading, chunk.text))
            kept.append(chunk)
    return kept


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
        return _Prepared(
            document, collection, embedder, document.content_hash(), decide_unrepeated(chunks)
        )

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
            stored = [(item, [next(vectors) for _ in item.chunks]) for _, item in group]
            updated_at = time.time()
            await self._upsert_vectors(stored, updated_at)
            for index, item in group:
                await self._store(item, updated_at)
                outcomes[index] = Outcome(
                    item.document.collection, item.document.id, "indexed", len(item.chunks)
                )
            await self._delete_other_versions([item for _, item in group])
        return [outcomes[index] for index in range(len(documents))]

    async def _delete_other_versions(self, items: list[_Prepared]) -> None:
        """Remove the vectors of the documents' other versions, now that the catalog
        holds the new ones: a request per collection and up to DELETE_BATCH documents."""
        by_collection: dict[str, dict[str, str]] = {}
        for item in items:
            keep = by_collection.setdefault(item.document.collection, {})
            keep[item.document.id] = item.content_hash
        model = items[0].embedder.name if items else ""
        for collection, keep in by_collection.items():
            pairs = list(keep.items())
            for start in range(0, len(pairs), DELETE_BATCH):
                await asyncio.to_thread(
                    self.vectors.delete_other_versions,
                    collection,
                    model,
                    dict(pairs[start : start + DELETE_BATCH]),
                )

    @staticmethod
    def _chunk_ids(item: _Prepared) -> list[str]:
        document = item.document
        prefix = f"{document.collection}/{document.id}#{item.content_hash[:16]}"
        return [f"{prefix}#{c.position}" for c in item.chunks]

    async def _upsert_vectors(
        self, stored: list[tuple[_Prepared, list[list[float]]]], updated_at: float
    ) -> None:
        """Write the chunks' vectors of several documents to Chroma in few calls: one per
        collection and up to UPSERT_BATCH chunks (a request per document made bulk
        ingestion wait on Chroma: 2,000 small documents spent most of their 30 s there)."""
        batch: list[tuple[_Prepared, list[list[float]]]] = []
        size = 0
        for pair in stored:
            if batch and (
                size + len(pair[0].chunks) > UPSERT_BATCH
                or pair[0].document.collection != batch[0][0].document.collection
            ):
                await self._upsert_batch(batch, updated_at)
                batch, size = [], 0
            batch.append(pair)
            size += len(pair[0].chunks)
        if batch:
            await self._upsert_batch(batch, updated_at)

    async def _upsert_batch(
        self, batch: list[tuple[_Prepared, list[list[float]]]], updated_at: float
    ) -> None:
        ids: list[str] = []
        vectors: list[list[float]] = []
        metadatas: list[dict[str, Any]] = []
        for item, item_vectors in batch:
            document = item.document
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
                item.content_hash,
                updated_at,
            )
            ids += self._chunk_ids(item)
            vectors += item_vectors
            metadatas += [
                {**metadata, "position": c.position, "heading": c.heading} for c in item.chunks
            ]
        first = batch[0][0]
        await asyncio.to_thread(
            self.vectors.upsert,
            first.document.collection,
            first.embedder.name,
            ids,
            vectors,
            metadatas,
        )

    async def _store(self, item: _Prepared, updated_at: float) -> None:
        """Record a document whose vectors are in Chroma (`_upsert_vectors`) in the
        catalog (its other versions' vectors are removed after: `_delete_other_versions`)."""
        document, content_hash = item.document, item.content_hash
        ids = self._chunk_ids(item)
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
