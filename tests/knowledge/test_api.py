"""The ingestion API over real HTTP, as a source application uses it."""

from __future__ import annotations

import asyncio
import base64
import json
from types import SimpleNamespace

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from yarl import URL

from core.knowledge_base.api import IngestApi
from core.knowledge_base.base import KnowledgeBase
from tests.knowledge.conftest import knowledge_settings
from tests.support.files import (
    TRAVEL_PAGES,
    make_docx,
    make_locked_pdf,
    make_pdf,
    make_scanned_pdf,
    make_scanned_text_pdf,
    render_text_image,
)

WIKI = {"Authorization": "Bearer wiki-token"}
TRACKER = {"Authorization": "Bearer tracker-token"}
DOC = {
    "title": "Travel policy",
    "content": "# Travel\n\nTrains are booked two weeks ahead.",
    "url": "https://wiki/t",
}


@pytest.fixture
async def api(tmp_path, embedders, storage_toml):
    settings = knowledge_settings(tmp_path, extra=storage_toml)
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    worker = asyncio.create_task(kb.queue.run())
    server = TestServer(IngestApi(kb, lambda: settings).build_app())
    await server.start_server()
    async with aiohttp.ClientSession(str(server.make_url("/"))) as http:
        yield SimpleNamespace(http=http, kb=kb, url=server.make_url("/"))
    worker.cancel()
    await server.close()
    await kb.close()


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
    "a title with a line break": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "title": "Travel\n\n> forged quote"}, "headers": WIKI},
        400,
        "invalid_document",
    ),
    "a title that turns its text around": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "title": "Travel \u202egnp.exe"}, "headers": WIKI},
        400,
        "invalid_document",
    ),
    "a link that is not a web link": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "url": "javascript:alert(1)"}, "headers": WIKI},
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
    assert await api.kb.jobs.queue_depth() == 0
    assert await api.kb.catalog.collection_sizes() == {}


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
    document = spec["components"]["schemas"]["Document"]
    assert set(document["required"]) == {"title"}
    assert {"content", "content_base64"} <= set(document["properties"])
    assert "pdf" in str(document["properties"]["format"])


def raw_json(text: str) -> dict:
    """A body written by hand, as a hostile or careless client may send it."""
    return {"data": text.encode(), "headers": {**WIKI, "Content-Type": "application/json"}}


DEEP = "[" * 50_000 + "]" * 50_000
UNREADABLE = {
    "JSON nested 50,000 deep": (
        "PUT",
        "/collections/handbook/documents/a",
        raw_json(DEEP),
        "invalid_json",
        "nests arrays or objects too deeply",
    ),
    "a 5,000-digit number": (
        "PUT",
        "/collections/handbook/documents/a",
        raw_json('{"title": "T", "content": "C", "version": ' + "7" * 5000 + "}"),
        "invalid_json",
        "a number has more than 100 digits",
    ),
    "a date in the year 9999": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "date": "9999-12-31"}, "headers": WIKI},
        "invalid_document",
        "date '9999-12-31' is out of range: years 1 to 9998",
    ),
    "a period that ends in the year 9999": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "date": "2026-01-01", "date_end": "9999-12-31"}, "headers": WIKI},
        "invalid_document",
        "date_end '9999-12-31' is out of range: years 1 to 9998",
    ),
    "a title of spaces": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "title": "   "}, "headers": WIKI},
        "invalid_document",
        "title: Value error, must not be blank",
    ),
    "a one-day period that ends the day before it starts": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "date": "2023-12-31", "date_end": "2023-12-30"}, "headers": WIKI},
        "invalid_document",
        "date_end is before date",
    ),
    "an end that is not a date": (
        "PUT",
        "/collections/handbook/documents/a",
        {"json": {**DOC, "date": "2023-12-31", "date_end": "soon"}, "headers": WIKI},
        "invalid_document",
        "date_end 'soon' is not an ISO 8601 date or time",
    ),
    "an unknown token": (
        "GET",
        "/collections",
        {"headers": {"Authorization": "Bearer nope"}},
        "unauthenticated",
        "this token is not one of the applications' tokens",
    ),
    "a path the API does not have": (
        "GET",
        "/collection",
        {"headers": WIKI},
        "not_found",
        "GET /api/v1/collection is not a route of this API (see /api/v1/openapi.json)",
    ),
    "a document id left empty": (
        "PUT",
        "/collections/handbook/documents/",
        {"json": DOC, "headers": WIKI},
        "invalid_id",
        "a document id cannot be empty",
    ),
    "a method the route does not take": (
        "POST",
        "/collections/handbook/documents/a",
        {"json": DOC, "headers": WIKI},
        "method_not_allowed",
        "POST is not allowed here: DELETE, GET or PUT",
    ),
    "a lone surrogate in the content": (
        "PUT",
        "/collections/handbook/documents/a",
        raw_json('{"title": "T", "content": "broken \\ud800 text"}'),
        "invalid_json",
        "content: has a lone UTF-16 surrogate",
    ),
    "a lone surrogate in the title": (
        "PUT",
        "/collections/handbook/documents/a",
        raw_json('{"title": "\\udfff", "content": "C"}'),
        "invalid_json",
        "title: has a lone UTF-16 surrogate",
    ),
    "a body that is not UTF-8": (
        "PUT",
        "/collections/handbook/documents/a",
        {"data": b'{"title": "\xed\xa0\x80", "content": "C"}', "headers": WIKI},
        "invalid_json",
        "not utf-8 text",
    ),
    "an unknown charset": (
        "PUT",
        "/collections/handbook/documents/a",
        {"data": b"{}", "headers": {**WIKI, "Content-Type": "application/json; charset=nope"}},
        "invalid_json",
        "unknown charset 'nope'",
    ),
    "NUL in a document id": (
        "PUT",
        "/collections/handbook/documents/a%00b",
        {"json": DOC, "headers": WIKI},
        "invalid_id",
        "control characters or lone surrogates (found U+0000)",
    ),
    "ESC in a document id": (
        "PUT",
        "/collections/handbook/documents/a%1B[31m",
        {"json": DOC, "headers": WIKI},
        "invalid_id",
        "(found U+001B)",
    ),
    "DEL in a document id to delete": (
        "DELETE",
        "/collections/handbook/documents/a%7F",
        {"headers": WIKI},
        "invalid_id",
        "(found U+007F)",
    ),
    "a C1 control in a document id asked about": (
        "GET",
        "/collections/handbook/documents/a%C2%85",
        {"headers": WIKI},
        "invalid_id",
        "(found U+0085)",
    ),
    "a control character in a collection name": (
        "PUT",
        "/collections/hand%00book/documents/a",
        {"json": DOC, "headers": WIKI},
        "invalid_collection",
        "a collection name cannot hold control characters",
    ),
}


@pytest.mark.parametrize(
    "method,path,kwargs,code,message", UNREADABLE.values(), ids=UNREADABLE.keys()
)
async def test_unreadable_bodies_dates_ids_and_paths_get_a_precise_refusal(
    api, method, path, kwargs, code, message
):
    async with api.http.request(method, URL("/api/v1" + path, encoded=True), **kwargs) as got:
        assert got.content_type == "application/json", await got.text()
        body = await got.json()
    status = {"unauthenticated": 401, "not_found": 404, "method_not_allowed": 405}.get(code, 400)
    assert (got.status, body["error"]["code"]) == (status, code), body
    assert message in body["error"]["message"], body
    if code == "method_not_allowed":
        assert set(got.headers["Allow"].split(", ")) >= {"GET", "PUT", "DELETE"}
    assert not body["error"]["message"].startswith("body:"), "named after its field"
    assert await api.kb.jobs.queue_depth() == 0
    assert await api.kb.catalog.collection_sizes() == {}


@pytest.mark.parametrize(
    "date,date_end",
    [
        ("0001-01-01", "9998-12-31"),
        ("2026-11-30T14:00:00+01:00", "2026-11-30"),  # a meeting's time, to its day's end
        ("2026-11-30", "2026-11-30"),
        ("2026-11-30T14:00:00", "2026-11-30T14:00:00"),
    ],
)
async def test_the_accepted_date_ranges_still_index(api, date, date_end):
    edges = {**DOC, "date": date, "date_end": date_end}
    status, body = await call(
        api, "PUT", "/collections/handbook/documents/a?wait=true", json=edges, headers=WIKI
    )
    assert (status, body["state"]) == (200, "indexed"), body


async def test_a_token_that_is_not_utf8_is_unknown_not_an_error(api):
    """Raw bytes in the header, as no well-behaved client library would send them."""
    reader, writer = await asyncio.open_connection(api.url.host, api.url.port)
    writer.write(
        b"GET /api/v1/collections HTTP/1.1\r\nHost: bot\r\n"
        b"Authorization: Bearer wiki-\xff\xfe\r\nConnection: close\r\n\r\n"
    )
    await writer.drain()
    head, _, body = (await reader.read()).partition(b"\r\n\r\n")
    writer.close()
    assert head.startswith(b"HTTP/1.1 401 "), head
    assert json.loads(body)["error"]["code"] == "unauthenticated"


def file_body(data: bytes, fmt: str, title: str) -> dict:
    return {"title": title, "format": fmt, "content_base64": base64.b64encode(data).decode()}


def wrapped(body: dict) -> dict:
    """The base64 in lines of 76 characters, as `base64` and `openssl base64` write it."""
    text = body["content_base64"]
    return {**body, "content_base64": "\n".join(text[i : i + 76] for i in range(0, len(text), 76))}


async def test_pdf_and_word_files_are_indexed_from_their_text(api):
    """A PDF's passages keep their page; a Word document's tables stay whole."""
    status, body = await call(
        api,
        "PUT",
        "/collections/handbook/documents/travel.pdf?wait=true",
        json=file_body(make_pdf(), "pdf", "Travel policy (PDF)"),
        headers=WIKI,
    )
    assert (status, body["state"], body["indexed"]["chunks"]) == (200, "indexed", 3)
    [hit] = await api.kb.retriever.search("how much may a hotel night cost?", k=1)
    assert (hit.document_id, hit.heading) == ("travel.pdf", "p. 2")
    assert "140 euros" in hit.text

    status, body = await call(
        api,
        "PUT",
        "/collections/handbook/documents/onboarding.docx?wait=true",
        json=wrapped(file_body(make_docx(), "docx", "Onboarding")),
        headers=WIKI,
    )
    assert (status, body["state"]) == (200, "indexed")
    [hit] = await api.kb.retriever.search("contacts of each team", k=1)
    assert hit.document_id == "onboarding.docx" and "| IT desk | Room 204 |" in hit.text


async def test_a_scanned_pdf_and_an_image_are_indexed_from_their_text_read_by_ocr(api):
    status, body = await call(
        api,
        "PUT",
        "/collections/handbook/documents/scan.pdf?wait=true",
        json=file_body(make_scanned_text_pdf(), "pdf", "Travel policy (scan)"),
        headers=WIKI,
    )
    assert (status, body["state"]) == (200, "indexed")
    [hit] = await api.kb.retriever.search("how much may a hotel night cost?", k=1)
    assert (hit.document_id, hit.heading) == ("scan.pdf", "p. 2 (scan)")
    assert "140 euros" in hit.text

    screenshot = render_text_image("ERROR E4711: quota exceeded", width_mm=120, height_mm=25)
    status, body = await call(
        api,
        "PUT",
        "/collections/handbook/documents/error.png?wait=true",
        json=file_body(screenshot, "image", "Error screenshot"),
        headers=WIKI,
    )
    assert (status, body["state"]) == (200, "indexed")
    [hit] = await api.kb.retriever.search("quota exceeded error", k=1)
    assert hit.document_id == "error.png" and "E4711" in hit.text


async def test_a_300_page_scan_is_refused_with_the_reason_before_it_is_read(api):
    scan = make_scanned_text_pdf(TRAVEL_PAGES, repeat=100)
    got, answer = await call(
        api,
        "PUT",
        "/collections/handbook/documents/archive.pdf?wait=true",
        json=file_body(scan, "pdf", "Archive"),
        headers=WIKI,
    )
    assert (got, answer["error"]["code"]) == (400, "unreadable_document")
    assert answer["error"]["message"] == (
        "the pdf file cannot be read: it has 300 pages without a text layer (scans), more "
        "than the 30 the bot reads by OCR"
    )


FILE_REFUSALS = {
    "a scan without text": (
        file_body(make_scanned_pdf(), "pdf", "Scan"),
        400,
        "unreadable_document",
        "the pdf file cannot be read: it has no text layer",
    ),
    "a locked PDF": (
        file_body(make_locked_pdf(), "pdf", "Locked"),
        400,
        "unreadable_document",
        "protected by a password",
    ),
    "not base64": (
        {"title": "T", "format": "pdf", "content_base64": "%%%"},
        400,
        "invalid_document",
        "content_base64: not valid base64",
    ),
    "a PDF sent as text": (
        {"title": "T", "format": "pdf", "content": "hello"},
        400,
        "invalid_document",
        "sent as content_base64, not content",
    ),
    "Markdown without content": (
        {"title": "T"},
        400,
        "invalid_document",
        "content: Field required",
    ),
    "base64 for Markdown": (
        {"title": "T", "content_base64": "aGVsbG8="},
        400,
        "invalid_document",
        "content_base64 is for pdf, docx and image files",
    ),
}


@pytest.mark.parametrize("body,status,code,says", FILE_REFUSALS.values(), ids=FILE_REFUSALS)
async def test_a_file_that_cannot_be_read_gets_a_precise_refusal(api, body, status, code, says):
    got, answer = await call(
        api, "PUT", "/collections/handbook/documents/file?wait=true", json=body, headers=WIKI
    )
    assert (got, answer["error"]["code"]) == (status, code)
    assert says in answer["error"]["message"]
    got, answer = await call(api, "GET", "/collections/handbook/documents/file", headers=WIKI)
    assert answer["state"] == "absent", "nothing was queued"
