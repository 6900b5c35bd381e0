"""A collection whose embedding model changes is embedded again once, from the catalog's
chunks: a German question finds the English page after the switch to the multilingual
model, and a realignment that stopped midway is finished at the next start."""

from __future__ import annotations

import pytest

from core.knowledge.documents import Document, SearchFilters
from core.knowledge.ingest.realign import decide_realign, realign_models
from core.knowledge_base.base import KnowledgeBase
from tests.knowledge.conftest import knowledge_settings

PAGES = [
    Document("handbook", "leave", "Annual leave", "Full-time staff get 27 days of annual leave."),
    Document("handbook", "parking", "Parking", "The garage has 40 spaces, given by lottery."),
]
GERMAN = "Wie viele Tage Jahresurlaub bekommen Vollzeitbeschäftigte?"


@pytest.mark.parametrize(
    ("recorded", "has_chunks", "again"),
    [
        (None, False, False),
        (None, True, True),
        (("m", True), True, False),
        (("old", True), True, True),
        (("m", False), True, True),
        (("old", False), False, True),
    ],
)
def test_decide_realign(recorded, has_chunks, again):
    assert decide_realign(recorded, "m", has_chunks) is again


def with_model(settings, model: str):
    handbook = settings.collections["handbook"].model_copy(update={"embedding_model": model})
    return settings.model_copy(
        update={"collections": {**settings.collections, "handbook": handbook}}
    )


async def test_a_changed_model_embeds_the_collection_again(tmp_path, embedders, storage_toml):
    before = knowledge_settings(tmp_path, extra=storage_toml)
    current = [before]
    kb = await KnowledgeBase.open(lambda: current[0], embedders)
    try:
        await kb.indexer.put_many(PAGES)
        assert await realign_models(kb.catalog, kb.vectors, kb.embedders, lambda: current[0]) == {}

        current[0] = with_model(before, "multilingual-e5-small")
        # A realignment that stopped midway: Chroma holds a partial, empty collection.
        kb.vectors.start_model("handbook", "multilingual-e5-small")
        done = await realign_models(kb.catalog, kb.vectors, kb.embedders, lambda: current[0])
        assert done == {"handbook": 2}
        assert kb.vectors.recorded_model("handbook") == ("multilingual-e5-small", True)
        hits = await kb.retriever.search(GERMAN, SearchFilters(collections=("handbook",)))
        assert hits and hits[0].document_id == "leave"
        assert await realign_models(kb.catalog, kb.vectors, kb.embedders, lambda: current[0]) == {}
    finally:
        await kb.close()
