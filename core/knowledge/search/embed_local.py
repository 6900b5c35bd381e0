"""Sentence-transformers models (all-MiniLM-L6-v2 by default), loaded once per process."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import torch

from core.knowledge.search.embedding import Embedder, resolve_model_path, run_in_turns


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


class LocalEmbedder(Embedder):
    """One symmetric model: queries and passages are embedded alike."""

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
        # What the model reads of a text (all-MiniLM-L6-v2: 256 word pieces); the rest
        # would be cut off silently.
        self.max_tokens = int(self._model.max_seq_length or 256)
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

    async def embed_passages(self, texts: list[str]) -> list[list[float]]:
        # A batch a call: a question asked meanwhile waits for one batch at most.
        return await run_in_turns(self._thread, self.encode, texts, self.batch_size)

    async def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return await self.embed_passages(texts)

    def close(self) -> None:
        """End the model's thread once it is idle (an encode under way finishes)."""
        self._thread.shutdown(wait=False, cancel_futures=True)
