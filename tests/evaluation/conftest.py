"""The evaluation tests embed public sets that are the same every run: the real models'
vectors are kept in the pytest cache between runs (tests/support/embedding_cache.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import core.knowledge_base.base
from tests.support.embedding_cache import CachingEmbedders


@pytest.fixture(scope="session")
def embedding_cache(request: pytest.FixtureRequest) -> Path:
    """The folder of the kept vectors (under .pytest_cache; `--cache-clear` empties it)."""
    return request.config.cache.mkdir("embeddings")


@pytest.fixture(scope="session")
def embedders(embedding_cache: Path) -> CachingEmbedders:
    """The real embedding models, loaded once per process, their vectors kept."""
    return CachingEmbedders(embedding_cache)


@pytest.fixture
def cached_embeddings(embedding_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A knowledge base the test opens without models of its own (as `knowledge-eval`
    does) keeps its vectors too."""

    def caching(batch_size: int = 64) -> CachingEmbedders:
        return CachingEmbedders(embedding_cache, batch_size)

    monkeypatch.setattr(core.knowledge_base.base, "Embedders", caching)
