"""Fixtures shared by the test folders."""

from __future__ import annotations

import pytest

from core.knowledge.embedding import Embedders


@pytest.fixture(scope="session")
def embedders() -> Embedders:
    """The real embedding model, loaded once for the whole run."""
    return Embedders()
