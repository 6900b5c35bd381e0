"""Chroma, embedded or as a server: one Chroma collection per knowledge collection.

Chroma only proposes candidates; the catalog decides what is current. Embeddings are
always passed in, never computed by Chroma (its default model would download at run time).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar
from urllib.parse import urlparse

import chromadb
import httpx
from chromadb.config import Settings as ChromaSettings
from chromadb.errors import NotFoundError

log = logging.getLogger(__name__)


class ModelMismatch(Exception):
    """A collection was indexed with another embedding model than the configured one."""


class KnowledgeUnavailable(Exception):
    """Chroma cannot be reached (a server that is down or restarting); for logs."""


P = ParamSpec("P")
R = TypeVar("R")


def _reached(call: Callable[P, R]) -> Callable[P, R]:
    """A call to Chroma whose network failure is a KnowledgeUnavailable, so that callers
    tell an outage (say so, retry later) from a bug."""

    @functools.wraps(call)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return call(*args, **kwargs)
        except httpx.TransportError as exc:
            raise KnowledgeUnavailable(f"Chroma is not reachable: {type(exc).__name__}") from exc

    return wrapper


class VectorStore:
    def __init__(self, chroma_url: str | None, data_dir: Path) -> None:
        self._chroma_url = chroma_url
        self._data_dir = data_dir
        self._client_made: Any = None
        # Searches run in threads; two first uses at once would both open Chroma, and
        # embedded Chroma fails when opened twice concurrently.
        self._connecting = threading.Lock()
        self._collections: dict[str, Any] = {}

    @property
    def _client(self) -> Any:
        """Connected on first use, so that the bot starts while a Chroma server is down."""
        with self._connecting:
            if self._client_made is None:
                self._client_made = self._connect()
        return self._client_made

    def _connect(self) -> Any:
        settings = ChromaSettings(anonymized_telemetry=False)
        if not self._chroma_url:
            return chromadb.PersistentClient(path=str(self._data_dir / "chroma"), settings=settings)
        url = urlparse(self._chroma_url)
        try:
            return chromadb.HttpClient(
                host=url.hostname or "127.0.0.1",
                port=url.port or (443 if url.scheme == "https" else 8000),
                ssl=url.scheme == "https",
                settings=settings,
            )
        except ValueError as exc:  # Chroma's "Could not connect to a Chroma server"
            raise KnowledgeUnavailable(str(exc)) from exc

    def _collection(self, name: str, model: str) -> Any:
        recorded = None
        # The cached handle first; when its model differs, Chroma's own record (another
        # process may have embedded the collection again since).
        for fresh in (False, True):
            cached = None if fresh else self._collections.get(name)
            if cached is None:
                cached = self._client.get_or_create_collection(
                    f"kb-{name}",
                    metadata={"model": model, "hnsw:space": "cosine"},
                    embedding_function=None,
                )
                self._collections[name] = cached
            recorded = (cached.metadata or {}).get("model")
            if recorded == model:
                return cached
        raise ModelMismatch(
            f"collection {name!r} holds embeddings of {recorded!r} but the config says "
            f"{model!r}; it is embedded again at the next start of a process that indexes"
        )

    @_reached
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

    @_reached
    def delete_document(self, name: str, model: str, doc_id: str, keep_hash: str = "") -> None:
        """Remove a document's chunks, except those of the version `keep_hash`."""
        where: dict[str, Any] = {"doc_id": doc_id}
        if keep_hash:
            where = {"$and": [where, {"content_hash": {"$ne": keep_hash}}]}
        self._collection(name, model).delete(where=where)

    @_reached
    def delete_other_versions(self, name: str, model: str, keep: dict[str, str]) -> None:
        """Remove the chunks of the documents of `keep` (doc_id -> content hash), except
        those of the version kept: `delete_document` for many documents in one request."""
        clauses: list[dict[str, Any]] = [
            {"$and": [{"doc_id": doc_id}, {"content_hash": {"$ne": content_hash}}]}
            for doc_id, content_hash in keep.items()
        ]
        if clauses:
            where = clauses[0] if len(clauses) == 1 else {"$or": clauses}
            self._collection(name, model).delete(where=where)

    @_reached
    def delete_ids(self, name: str, model: str, ids: list[str]) -> None:
        if ids:
            self._collection(name, model).delete(ids=ids)

    @_reached
    def query(
        self,
        name: str,
        model: str,
        vector: list[float],
        n: int,
        where: dict[str, Any] | None = None,
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine distance), nearest first, of the entries matching `where`.

        Knowledge searches pass no filter: in Chroma 1.5 a `where` that matches most
        chunks makes a query ten times slower (2 ms -> 30 ms at 10k chunks), so the
        catalog applies the filters to the candidates instead. The rooms' history passes
        its room: a filter that matches few entries is cheap.
        """
        collection = self._collection(name, model)
        result = collection.query(
            query_embeddings=[vector], n_results=n, include=["distances"], where=where
        )
        return list(zip(result["ids"][0], result["distances"][0], strict=True))

    @_reached
    def names(self) -> list[str]:
        """The names of the collections in Chroma (as given to the other methods)."""
        return [
            name.removeprefix("kb-")
            for name in (
                c if isinstance(c, str) else c.name for c in self._client.list_collections()
            )
            if name.startswith("kb-")
        ]

    @_reached
    def entries(self, name: str) -> tuple[str, list[str], list[list[float]], list[dict[str, Any]]]:
        """(the model it was made with, ids, embeddings, metadatas) of a whole collection."""
        collection = self._client.get_collection(f"kb-{name}", embedding_function=None)
        got = collection.get(include=["embeddings", "metadatas"])
        model = (collection.metadata or {}).get("model", "")
        embeddings = [list(map(float, vector)) for vector in got["embeddings"]]
        return model, list(got["ids"]), embeddings, [dict(m or {}) for m in got["metadatas"]]

    @_reached
    def recorded_model(self, name: str) -> tuple[str, bool] | None:
        """(the model of the collection's vectors, whether all its chunks have them);
        None when Chroma holds no such collection."""
        try:
            collection = self._client.get_collection(f"kb-{name}", embedding_function=None)
        except NotFoundError:
            return None
        metadata = collection.metadata or {}
        return str(metadata.get("model", "")), not metadata.get("partial", False)

    @_reached
    def start_model(self, name: str, model: str) -> None:
        """Empty the collection for vectors of `model`, marked partial until
        `finish_model`: a process that stops midway starts over at its next start."""
        self._collections.pop(name, None)
        with contextlib.suppress(NotFoundError):
            self._client.delete_collection(f"kb-{name}")
        # A search in between may have made it again (without the mark): mark it.
        partial = {"model": model, "hnsw:space": "cosine", "partial": True}
        made = self._client.get_or_create_collection(
            f"kb-{name}", metadata=partial, embedding_function=None
        )
        made.modify(metadata={"model": model, "partial": True})

    @_reached
    def finish_model(self, name: str, model: str) -> None:
        """Every chunk of the collection has its vector of `model`."""
        self._client.get_collection(f"kb-{name}", embedding_function=None).modify(
            metadata={"model": model}
        )
        self._collections.pop(name, None)

    @_reached
    def drop(self, name: str) -> None:
        self._collections.pop(name, None)
        self._client.delete_collection(f"kb-{name}")

    @_reached
    def heartbeat(self) -> None:
        """Raises when Chroma does not answer."""
        self._client.heartbeat()

    @_reached
    def count(self, name: str, model: str) -> int:
        return self._collection(name, model).count()
