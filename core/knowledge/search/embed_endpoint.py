"""Any OpenAI-compatible `/v1/embeddings` endpoint: how production serves bge-m3 or
multilingual-e5-large from vLLM, text-embeddings-inference, Infinity or Ollama.

Its failures are told as Chroma's are: `EmbeddingUnavailable` names what went wrong
(down, too slow, an error status, an answer of the wrong shape or dimension), the
question in progress is told that search is unavailable, and nothing is indexed half
(the indexer embeds a document's chunks before it writes any of them).
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import openai

from core.knowledge.search.embedding import (
    Calibration,
    Embedder,
    EmbeddingModelError,
    EmbeddingUnavailable,
)

if TYPE_CHECKING:
    from core.config.knowledge import EmbeddingEndpointSettings

# Without the model's tokenizer, tokens are estimated: a word piece per 4 letters of a
# word (at least one), one per punctuation mark, one per CJK character; generous, since
# a chunk that the estimate keeps too long would be cut by the server.
_PIECES = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|\w+|[^\w\s]")


def estimate_tokens(text: str) -> int:
    """A generous estimate of the word pieces of `text` for an unknown tokenizer."""
    return sum(max(1, math.ceil(len(piece) / 4)) for piece in _PIECES.findall(text))


# Clients being closed: a task the loop holds no reference to may be collected midway.
_CLOSING: set[asyncio.Task[None]] = set()


def _normalised(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(value * value for value in vector))
    return [value / norm for value in vector] if norm else vector


class EndpointEmbedder(Embedder):
    """The endpoint named `name` in `[knowledge.embedding_endpoints]`, read live."""

    def __init__(self, name: str, settings: Callable[[], EmbeddingEndpointSettings | None]) -> None:
        self.name = name
        self._settings = settings
        self._client: openai.AsyncOpenAI | None = None
        self._client_for: tuple[str, str, float] | None = None
        # The dimension of the first answer, when the settings name none: an endpoint that
        # changes model under the same name must not mix vectors of two sizes.
        self._seen_dimension: int | None = None

    def _current(self) -> EmbeddingEndpointSettings:
        current = self._settings()
        if current is None:
            raise EmbeddingUnavailable(f"the embedding endpoint {self.name!r} is not configured")
        return current

    @property
    def max_tokens(self) -> int:  # type: ignore[override]
        return self._current().max_tokens

    @property
    def calibration(self) -> Calibration:  # type: ignore[override]
        current = self._current()
        return Calibration(current.related_distance, current.unrelated_distance)

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def _client_of(self, current: EmbeddingEndpointSettings) -> openai.AsyncOpenAI:
        wanted = (current.url, current.secret_key() or "", current.timeout_seconds)
        if self._client is None or self._client_for != wanted:
            self.close()  # the client of the settings before an edit, and its pool
            # Retries are the caller's: a question must be told within its timeout.
            self._client = openai.AsyncOpenAI(
                base_url=current.url,
                api_key=current.secret_key() or "none",
                timeout=current.timeout_seconds,
                max_retries=0,
            )
            self._client_for = wanted
        return self._client

    async def _embed(self, texts: list[str], kind: str) -> list[list[float]]:
        if not texts:
            return []
        current = self._current()
        prefix = current.query_prefix if kind == "query" else current.passage_prefix
        vectors: list[list[float]] = []
        for start in range(0, len(texts), current.batch_size):
            batch = [prefix + text for text in texts[start : start + current.batch_size]]
            vectors += await self._call(current, batch, kind)
        return vectors

    async def _call(
        self, current: EmbeddingEndpointSettings, batch: list[str], kind: str
    ) -> list[list[float]]:
        extra = {"input_type": kind} if current.input_type else None
        where = f"the embedding endpoint {self.name!r}"
        try:
            answer = await self._client_of(current).embeddings.create(
                model=current.model, input=batch, encoding_format="float", extra_body=extra
            )
        except openai.APITimeoutError as exc:
            raise EmbeddingUnavailable(
                f"{where} did not answer within {current.timeout_seconds:g} s"
            ) from exc
        except openai.APIConnectionError as exc:
            raise EmbeddingUnavailable(f"{where} cannot be reached") from exc
        except openai.APIStatusError as exc:
            if 400 <= exc.status_code < 500 and exc.status_code not in (408, 429):
                # Refused for what was sent (too long, say): the document's fault, told in
                # its job, not an outage that holds every job behind it.
                raise EmbeddingModelError(
                    f"{where} refused the text (HTTP {exc.status_code}); a chunk may be "
                    "longer than its max_tokens"
                ) from exc
            raise EmbeddingUnavailable(f"{where} answered HTTP {exc.status_code}") from exc
        except (openai.OpenAIError, ValueError, TypeError) as exc:
            raise EmbeddingUnavailable(f"{where} gave an answer that is not embeddings") from exc
        try:
            items = sorted(answer.data or [], key=lambda item: item.index)
            vectors = [list(map(float, item.embedding)) for item in items]
        except (TypeError, ValueError, AttributeError) as exc:
            raise EmbeddingUnavailable(f"{where} gave an answer that is not embeddings") from exc
        if len(vectors) != len(batch):
            raise EmbeddingUnavailable(f"{where} gave {len(vectors)} vectors for {len(batch)}")
        expected = current.dimensions or self._seen_dimension or len(vectors[0])
        if any(len(vector) != expected for vector in vectors):
            found = sorted({len(vector) for vector in vectors})
            raise EmbeddingUnavailable(
                f"{where} gave vectors of {', '.join(map(str, found))} dimensions instead of "
                f"{expected}: another model behind the same name wants a new name"
            )
        self._seen_dimension = expected
        return [_normalised(vector) for vector in vectors]

    async def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return await self._embed(texts, "passage")

    async def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return await self._embed(texts, "query")

    def close(self) -> None:
        client, self._client = self._client, None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop left: the pool goes with the process
            return
        if client is not None:
            closing = loop.create_task(client.close())
            _CLOSING.add(closing)
            closing.add_done_callback(_CLOSING.discard)
