"""The ingestion API over real HTTP, as a source application uses it."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from core.knowledge.api import IngestApi
from core.knowledge.base import KnowledgeBase
from tests.knowledge.conftest import knowledge_settings

WIKI = {"Authorization": "Bearer wiki-token"}
TRACKER = {"Authorization": "Bearer tracker-token"}
DOC = {
    "title": "Travel policy",
    "content": "# Travel\n\nTrains are booked two weeks ahead.",
    "url": "https://wiki/t",
}


@pytest.fixture
async def api(tmp_path, embedders):
    settings = knowledge_settings(tmp_path)
    kb = KnowledgeBase(lambda: settings, embedders)
    worker = asyncio.create_task(kb.queue.run())
    server = TestServer(IngestApi(kb, lambda: settings).build_app())
    await server.start_server()
    async with aiohttp.ClientSession(str(server.make_url("/"))) as http:
        yield SimpleNamespace(http=http, kb=kb)
    worker.cancel()
    await server.close()
    kb.close()


async def call(api, method, path, **kwargs):
    async with api.http.request(method, "/api/v1" + path, **kwargs) as response:
        return response.status, await response.json()


async def test_put_then_retrieve_then_status_then_delete(api):
    status, body = await call(
        api,
        "PUT",
        "/collections/handbook/documents/travel/policy.md?wait=true",
        json=DOC,
        headers=WIKI,
    )
    assert (status, body["state"], body["indexed"]["chunks"]) == (200, "indexed", 1)
    hits = await api.kb.retriever.search("when are trains booked?", k=1)
    assert (hits[0].document_id, hits[0].url) == ("travel/policy.md", "https://wiki/t")

    status, body = await call(
        api, "PUT", "/collections/handbook/documents/travel/policy.md", json=DOC, headers=WIKI
    )
    assert (status, body["state"]) == (200, "indexed"), "an unchanged document is not queued again"

    status, body = await call(
        api, "GET", "/collections/handbook/documents/travel/policy.md", headers=WIKI
    )
    assert body["indexed"]["title"] == "Travel policy"

    status, body = await call(
        api, "DELETE", "/collections/handbook/documents/travel/policy.md?wait=1", headers=WIKI
    )
    assert (status, body["state"]) == (200, "absent")
    assert await api.kb.retriever.search("when are trains booked?", k=1) == []


async def test_a_put_without_wait_is_queued_and_indexed_soon(api):
    status, body = await call(
        api, "PUT", "/collections/handbook/documents/a", json=DOC, headers=WIKI
    )
    assert (status, body["state"]) == (202, "queued")
    for _ in range(200):
        _, body = await call(api, "GET", "/collections/handbook/documents/a", headers=WIKI)
        if body["state"] == "indexed":
            break
        await asyncio.sleep(0.05)
    assert body["state"] == "indexed"


REFUSALS = {
    "no token": ("PUT", "/collections/handbook/documents/a", {"json": DOC}, 401, "unauthenticated"),
    "unknown token": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": DOC, "headers": {"Authorization": "Bearer nope"}},
        401,
        "unauthenticated",
    ),
    "another application's collection": (
        "PUT",
        "/collections/tickets/documents/a",
        {"json": DOC, "headers": WIKI},
        403,
        "forbidden",
    ),
    "delete in another application's collection": (
        "DELETE",
        "/collections/handbook/documents/a",
        {"headers": TRACKER},
        403,
        "forbidden",
    ),
    "unknown collection": (
        "PUT",
        "/collections/nope/documents/a",
        {"json": DOC, "headers": WIKI},
        404,
        "unknown_collection",
    ),
    "bad JSON": (
        "PUT",
        "/collections/handbook/documents/a",
        {"data": b"{not json", "headers": WIKI},
        400,
        "invalid_json",
    ),
    "missing title": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {"content": "x"}, "headers": WIKI},
        400,
        "invalid_document",
    ),
    "unknown field": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "room": "!x"}, "headers": WIKI},
        400,
        "invalid_document",
    ),
    "bad format": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "format": "pdf"}, "headers": WIKI},
        400,
        "invalid_document",
    ),
    "a date that is not ISO 8601": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "date": "next Tuesday"}, "headers": WIKI},
        400,
        "invalid_document",
    ),
    "a period that ends before it starts": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "date": "2026-11-03", "date_end": "2026-11-01"}, "headers": WIKI},
        400,
        "invalid_document",
    ),
    "over the size limit": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "content": "x" * 20_001}, "headers": WIKI},
        413,
        "too_large",
    ),
    "far over the size limit": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "content": "x" * 200_000}, "headers": WIKI},
        413,
        "too_large",
    ),
}


@pytest.mark.parametrize("method,path,kwargs,status,code", REFUSALS.values(), ids=REFUSALS.keys())
async def test_refusals_are_precise_and_change_nothing(api, method, path, kwargs, status, code):
    got, body = await call(api, method, path, **kwargs)
    assert (got, body["error"]["code"]) == (status, code), body
    assert api.kb.catalog.queue_depth() == 0
    assert api.kb.catalog.collection_sizes() == {}


async def test_an_application_lists_only_its_collections_with_sizes(api):
    await call(api, "PUT", "/collections/handbook/documents/a?wait=true", json=DOC, headers=WIKI)
    _, body = await call(api, "GET", "/collections", headers=WIKI)
    assert body["collections"] == [
        {"name": "handbook", "source": "wiki", "public": True, "documents": 1, "chunks": 1}
    ]
    _, body = await call(api, "GET", "/collections", headers=TRACKER)
    assert [c["name"] for c in body["collections"]] == ["tickets"]


async def test_the_openapi_document_describes_every_route(api):
    status, spec = await call(api, "GET", "/openapi.json")
    assert status == 200 and spec["openapi"].startswith("3.")
    path = spec["paths"]["/api/v1/collections/{collection}/documents/{doc_id}"]
    assert {"put", "delete", "get"} <= set(path)
    assert set(spec["components"]["schemas"]["Document"]["required"]) == {"title", "content"}
