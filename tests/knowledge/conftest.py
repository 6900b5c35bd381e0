"""Real Chroma (embedded, and a `chroma run` server), the real embedding model, real SQLite."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from core.config import Settings, parse_config
from core.knowledge.search.embedding import Embedders
from core.knowledge_base.base import KnowledgeBase
from tests.support.chroma_server import ChromaServer

KB_CONFIG = """
[matrix]
homeserver = "http://127.0.0.1:1"
user_id = "@bot:localhost"
password = "unused"

[bot]
data_dir = "{data_dir}"

[knowledge]
{chroma}
max_document_bytes = 20000

[sources.wiki]
token = "wiki-token"

[sources.tracker]
token = "tracker-token"

[collections.handbook]
source = "wiki"
public = true
chunk_tokens = 120
chunk_overlap = 20

[collections.tickets]
source = "tracker"
"""


def knowledge_settings(data_dir: Path, chroma_url: str | None = None, extra: str = "") -> Settings:
    text = KB_CONFIG.format(
        data_dir=data_dir, chroma=f'chroma_url = "{chroma_url}"' if chroma_url else ""
    )
    return parse_config(text + extra, origin="test.toml", env={}, base_dir=data_dir)


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = ChromaServer(tmp_path_factory.mktemp("chroma-server"))
    server.start()
    yield server.url
    server.stop()


@pytest.fixture(params=["embedded", "server"])
async def kb(
    request, tmp_path: Path, embedders: Embedders, storage_toml: str
) -> AsyncIterator[KnowledgeBase]:
    url = request.getfixturevalue("chroma_server") if request.param == "server" else None
    settings = knowledge_settings(tmp_path, url, storage_toml)
    base = await KnowledgeBase.open(lambda: settings, embedders)
    yield base
    if url:
        # The server outlives the test: leave it empty for the next one.
        client = base.vectors._client
        for collection in client.list_collections():
            client.delete_collection(collection.name)
    await base.close()
