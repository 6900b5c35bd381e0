"""Fixtures shared by the test folders."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from core.knowledge.embedding import Embedders
from tests.support.fake_llm import FakeLlm


@pytest.fixture(scope="session")
def embedders() -> Embedders:
    """The real embedding model, loaded once for the whole run."""
    return Embedders()


@pytest.fixture
async def llm() -> AsyncIterator[FakeLlm]:
    """The scripted OpenAI-compatible server (see tests/support/fake_llm.py)."""
    server = await FakeLlm().start()
    yield server
    await server.close()
