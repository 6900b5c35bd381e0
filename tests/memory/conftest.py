"""The conversation memory on a real store, real Chroma and the real embedding model."""

from __future__ import annotations

import pytest

from core.knowledge_base.base import KnowledgeBase
from core.memory.history import HistoryIndex
from core.memory.memory import ConversationMemory
from core.memory.store import SqlMemoryStore
from tests.knowledge.conftest import chroma_server, kb  # noqa: F401  (fixtures)


@pytest.fixture
async def memory(kb: KnowledgeBase, run_database) -> ConversationMemory:  # noqa: F811
    settings = kb.indexer.settings
    store = await SqlMemoryStore.open(await run_database())
    return ConversationMemory(
        store, HistoryIndex(store, kb.vectors, kb.embedders, settings), settings
    )
