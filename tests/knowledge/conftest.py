"""Real Chroma (embedded, and a `chroma run` server), the real embedding model, real SQLite."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.dev.synapse import free_port
from core.config import Settings, parse_config
from core.knowledge.base import KnowledgeBase
from core.knowledge.embedding import Embedders

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
    port = free_port()
    chroma = Path(sys.executable).parent / "chroma"
    path = tmp_path_factory.mktemp("chroma-server")
    process = subprocess.Popen(
        [str(chroma), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1)
            break
        except OSError:
            assert time.monotonic() < deadline, "chroma run did not start"
            time.sleep(0.2)
    yield url
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(params=["embedded", "server"])
def kb(request, tmp_path: Path, embedders: Embedders) -> Iterator[KnowledgeBase]:
    url = request.getfixturevalue("chroma_server") if request.param == "server" else None
    settings = knowledge_settings(tmp_path, url)
    base = KnowledgeBase(lambda: settings, embedders)
    yield base
    if url:
        # The server outlives the test: leave it empty for the next one.
        client = base.vectors._client
        for collection in client.list_collections():
            client.delete_collection(collection.name)
    base.close()
