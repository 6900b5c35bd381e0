"""Chroma, embedded or as a server: one Chroma collection per knowledge collection.

Chroma only proposes candidates; the catalog decides what is current. Embeddings are
always passed in, never computed by Chroma (its default model would download at run time).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import chromadb
from chromadb.config import Settings as ChromaSettings

log = logging.getLogger(__name__)


class ModelMismatch(Exception):
    """A collection was indexed with another embedding model than the configured one."""


class VectorStore:
    def __init__(self, chroma_url: str | None, data_dir: Path) -> None:
        settings = ChromaSettings(anonymized_telemetry=False)
        if chroma_url:
            url = urlparse(chroma_url)
            self._client = chromadb.HttpClient(
                host=url.hostname or "127.0.0.1",
                port=url.port or (443 if url.scheme == "https" else 8000),
                ssl=url.scheme == "https",
                settings=settings,
            )
        else:
            self._client = chromadb.PersistentClient(
                path=str(data_dir / "chroma"), settings=settings
            )
        self._collections: dict[str, Any] = {}

    def _collection(self, name: str, model: str) -> Any:
        cached = self._collections.get(name)
        if cached is None:
            cached = self._client.get_or_create_collection(
                f"kb-{name}",
                metadata={"model": model, "hnsw:space": "cosine"},
                embedding_function=None,
            )
            self._collections[name] = cached
        recorded = (cached.metadata or {}).get("model")
        if recorded != model:
            raise ModelMismatch(
                f"collection {name!r} holds embeddings of {recorded!r} but the config says "
                f"{model!r}; index it into a new collection instead of mixing models"
            )
        return cached

    def upsert(
        self,
        name: str,
        model: str,
        ids: list[str],
        embeddings: list[list[float]],
        metadatas: list[dict[str, Any]],
    ) -> None:
        if ids:
            self._collection(name, model).upsert(
                ids=ids, embeddings=embeddings, metadatas=metadatas
            )

    def delete_document(self, name: str, model: str, doc_id: str, keep_hash: str = "") -> None:
        """Remove a document's chunks, except those of the version `keep_hash`."""
        where: dict[str, Any] = {"doc_id": doc_id}
        if keep_hash:
            where = {"$and": [where, {"content_hash": {"$ne": keep_hash}}]}
        self._collection(name, model).delete(where=where)

    def query(self, name: str, model: str, vector: list[float], n: int) -> list[tuple[str, float]]:
        """(chunk id, cosine distance), nearest first.

        No metadata filter is passed: in Chroma 1.5 a `where` that matches most chunks
        makes a query ten times slower (2 ms -> 30 ms at 10k chunks), so the catalog
        applies the filters to the candidates instead.
        """
        collection = self._collection(name, model)
        result = collection.query(query_embeddings=[vector], n_results=n, include=["distances"])
        return list(zip(result["ids"][0], result["distances"][0], strict=True))

    def heartbeat(self) -> None:
        """Raises when Chroma does not answer."""
        self._client.heartbeat()

    def count(self, name: str, model: str) -> int:
        return self._collection(name, model).count()
