"""The conversation memory on real SQLite, real Chroma and the real embedding model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.knowledge.base import KnowledgeBase
from core.memory.history import HistoryIndex
from core.memory.memory import ConversationMemory
from core.memory.store import MemoryStore
from tests.knowledge.conftest import chroma_server, kb  # noqa: F401  (fixtures)


@pytest.fixture
def memory(kb: KnowledgeBase, tmp_path) -> Iterator[ConversationMemory]:  # noqa: F811
    settings = kb.indexer.settings
    store = MemoryStore(tmp_path / "memory.sqlite3")
    yield ConversationMemory(
        store, HistoryIndex(store, kb.vectors, kb.embedders, settings), settings
    )
    store.close()
