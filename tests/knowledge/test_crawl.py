"""The crawler against a real website on loopback (tests/support/docs_site.py), with the
real embedding model and store: what a first run indexes, what a second run costs, and
what changes, disappears or fails on the site does to the collection."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.runtime.ops import OpsServer
from core.config import Settings
from core.knowledge_base.api import IngestApi
from core.knowledge_base.base import KnowledgeBase
from core.knowledge_base.crawl.schedule import CrawlService
from core.knowledge_base.crawl.store import SqlCrawlStore
from core.metrics import Metrics
from core.storage.opening import Storage
from tests.knowledge.conftest import knowledge_settings
from tests.support.docs_site import DocsSite, Page
from tests.support.files import make_pdf

SITE = """
[sources.site]
crawl = ["{base}/sitemap_index.xml"]
allow = ["{base}/docs/"]
requests_per_second = 1000
private_addresses = true
schedule = "every 1d"

[collections.docs]
source = "site"
public = true
"""
LISTED = [
    "/docs/trains.html",
    "/docs/hotels.html",
    "/docs/parking.html",
    "/docs/laptops.html",
    "/docs/away.html",
    "/docs/private/salaries.html",
    "/docs/manual.pdf",
]
INDEXED = [
    "/docs/hotels.html",
    "/docs/manual.pdf",
    "/docs/new-home.html",
    "/docs/parking.html",
    "/docs/trains.html",
]


def build_site() -> DocsSite:
    site = DocsSite()
    site.pages = {
        "/docs/trains.html": Page(
            "Trains",
            "Trains to the Lyon office are booked two weeks ahead through Travelink.",
            "etag",
        ),
        "/docs/hotels.html": Page(
            "Hotels", "A hotel night in Paris costs at most 140 euros.", "last-modified"
        ),
        "/docs/parking.html": Page(
            "Parking", "Bicycles are parked in the basement garage behind the canteen.", "none"
        ),
        "/docs/new-home.html": Page(
            "Laptops", "Laptops are replaced every four years by the IT desk.", "etag"
        ),
        "/docs/private/salaries.html": Page(
            "Salaries", "The salary bands are a secret of the board."
        ),
        "/docs/manual.pdf": Page(
            "",
            body=make_pdf(
                ("Expenses. Receipts are filed within thirty days in the expenses tool.",),
                table=False,
            ),
            content_type="application/pdf",
        ),
        "/elsewhere/page.html": Page("Elsewhere", "Canteen menus are published on Fridays."),
    }
    site.redirects = {
        "/docs/laptops.html": "/docs/new-home.html",
        "/docs/away.html": "/elsewhere/page.html",
    }
    site.sitemap = list(LISTED)
    return site


def site_settings(
    tmp_path: Path, site: DocsSite, storage_toml: str, config: str = SITE
) -> Settings:
    return knowledge_settings(tmp_path, extra=config.format(base=site.base) + storage_toml)


@pytest.fixture
async def crawl(tmp_path, embedders, storage_toml) -> AsyncIterator[SimpleNamespace]:
    site = await build_site().start()
    settings = site_settings(tmp_path, site, storage_toml)
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    worker = asyncio.create_task(kb.queue.run())
    service = CrawlService(kb, kb.crawls, lambda: settings)
    yield SimpleNamespace(site=site, kb=kb, service=service, settings=settings)
    worker.cancel()
    await site.close()
    await kb.close()


async def indexed(kb: KnowledgeBase, site: DocsSite) -> dict[str, tuple[str, str]]:
    """The collection's documents: path → (title, url)."""
    rows = await kb.catalog.db.fetch(  # type: ignore[attr-defined]
        "SELECT doc_id, title, url FROM documents WHERE collection = 'docs'"
    )
    return {doc_id.removeprefix(site.base): (title, url) for doc_id, title, url in rows}


async def found(kb: KnowledgeBase, question: str) -> list[str]:
    return [hit.text for hit in await kb.retriever.search(question, k=3)]


async def run_once(service: CrawlService) -> dict:
    [report] = await service.tick()
    return report


async def test_the_first_run_indexes_exactly_the_allowed_pages(crawl):
    site, kb = crawl.site, crawl.kb
    report = await run_once(crawl.service)
    assert sorted(await indexed(kb, site)) == INDEXED
    docs = await indexed(kb, site)
    assert docs["/docs/trains.html"] == ("Trains", f"{site.base}/docs/trains.html")
    assert docs["/docs/new-home.html"] == ("Laptops", f"{site.base}/docs/new-home.html"), (
        "a redirected page is the document of its final URL"
    )
    assert docs["/docs/manual.pdf"][0] == f"{site.base}/docs/manual.pdf", "no <title>: the URL"
    assert site.requests_of("/docs/private/salaries.html") == [], "robots.txt is honoured"
    assert site.requests_of("/elsewhere/page.html") == [], (
        "a redirect out of the prefix is not followed"
    )
    assert "/elsewhere/page.html" not in docs
    assert any(
        "two weeks ahead" in text for text in await found(kb, "When are trains to Lyon booked?")
    )
    assert any("thirty days" in text for text in await found(kb, "When are receipts filed?"))
    assert {k: report[k] for k in ("pages_seen", "changed", "unchanged", "removed", "failed")} == {
        "pages_seen": 6,
        "changed": 5,
        "unchanged": 0,
        "removed": 0,
        "failed": 0,
    }
    # robots.txt, the index, the sitemap; 4 pages, a redirect followed (2 requests) and
    # one that is not (1 request).
    assert report["requests"] == len(site.log) == 3 + 4 + 2 + 1


async def test_a_second_run_changes_nothing_and_asks_each_page_once_conditionally(crawl):
    site, kb = crawl.site, crawl.kb
    await run_once(crawl.service)
    before = await kb.catalog.db.fetch("SELECT doc_id, updated_at FROM documents")  # type: ignore[attr-defined]
    site.log.clear()
    await kb.crawls.db.execute("UPDATE crawl_runs SET finished_at = 0")
    report = await run_once(crawl.service)
    assert (report["changed"], report["unchanged"], report["removed"], report["failed"]) == (
        0,
        5,
        0,
        0,
    )
    pages = [
        r
        for r in site.log
        if r.path not in ("/robots.txt", "/sitemap_index.xml", "/sitemaps/pages.xml")
    ]
    assert sorted(r.path for r in pages) == sorted(
        [
            "/docs/trains.html",
            "/docs/hotels.html",
            "/docs/parking.html",
            "/docs/laptops.html",
            "/docs/new-home.html",
            "/docs/away.html",
            "/docs/manual.pdf",
        ]
    ), "one request per page (a redirect's target is the same page)"
    conditional = {r.path for r in pages if r.conditional}
    assert conditional == {
        "/docs/trains.html",
        "/docs/hotels.html",
        "/docs/laptops.html",
        "/docs/new-home.html",
        "/docs/manual.pdf",
    }
    assert report["requests"] == len(site.log) == 3 + 7
    assert await kb.catalog.db.fetch("SELECT doc_id, updated_at FROM documents") == before  # type: ignore[attr-defined]
    assert await kb.jobs.queue_depth() == 0


async def test_changed_pages_are_indexed_again_and_gone_ones_removed(crawl):
    site, kb = crawl.site, crawl.kb
    await run_once(crawl.service)
    site.change("/docs/trains.html", "Trains to the Lyon office are now booked four weeks ahead.")
    del site.pages["/docs/parking.html"]  # 404, still listed
    site.sitemap.remove("/docs/hotels.html")  # no longer listed (still served)
    site.robots += "Disallow: /docs/manual.pdf\n"  # now disallowed
    await kb.crawls.db.execute("UPDATE crawl_runs SET finished_at = 0")
    report = await run_once(crawl.service)
    assert (report["changed"], report["removed"], report["failed"]) == (1, 3, 0)
    assert sorted(await indexed(kb, site)) == ["/docs/new-home.html", "/docs/trains.html"]
    texts = await found(kb, "When are trains to Lyon booked?")
    assert any("four weeks ahead" in text for text in texts)
    assert not any("two weeks ahead" in text for text in texts)
    assert not any("Bicycles" in text for text in await found(kb, "Where are bicycles parked?"))
    assert not any("140 euros" in text for text in await found(kb, "What may a hotel night cost?"))


async def test_a_failing_page_or_sitemap_keeps_the_documents(crawl):
    site, kb = crawl.site, crawl.kb
    await run_once(crawl.service)
    site.failing.add("/docs/trains.html")
    await kb.crawls.db.execute("UPDATE crawl_runs SET finished_at = 0")
    report = await run_once(crawl.service)
    assert (report["failed"], report["removed"]) == (1, 0)
    assert any("two weeks ahead" in t for t in await found(kb, "When are trains to Lyon booked?"))

    site.failing = {"/sitemaps/pages.xml"}
    await kb.crawls.db.execute("UPDATE crawl_runs SET finished_at = 0")
    report = await run_once(crawl.service)
    assert (report["complete"], report["removed"]) == (False, 0), "unreached is not gone"
    assert sorted(await indexed(kb, site)) == INDEXED


async def test_a_restart_in_the_middle_of_a_run_goes_on_from_the_saved_frontier(
    tmp_path, embedders, storage_toml
):
    site = await build_site().start()
    settings = site_settings(tmp_path, site, storage_toml)
    site.gates["/docs/parking.html"] = asyncio.Event()
    site.reached["/docs/parking.html"] = asyncio.Event()
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    worker = asyncio.create_task(kb.queue.run())
    first = asyncio.create_task(CrawlService(kb, kb.crawls, lambda: settings).tick())
    await site.reached["/docs/parking.html"].wait()  # two pages done, the third under way
    first.cancel()  # the process stops…
    worker.cancel()
    await asyncio.gather(first, worker, return_exceptions=True)
    await kb.close()
    site.gates["/docs/parking.html"].set()

    kb = await KnowledgeBase.open(lambda: settings, embedders)  # …and starts again
    worker = asyncio.create_task(kb.queue.run())
    try:
        [report] = await CrawlService(kb, kb.crawls, lambda: settings).tick()
        async with asyncio.timeout(60):
            # The jobs queued before the restart have no event to wait on.
            while await kb.jobs.queue_depth():  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        assert sorted(await indexed(kb, site)) == INDEXED
        for path in (
            "/sitemap_index.xml",
            "/sitemaps/pages.xml",
            "/docs/trains.html",
            "/docs/hotels.html",
        ):
            assert len(site.requests_of(path)) == 1, f"{path} was fetched again"
        assert len(site.requests_of("/docs/parking.html")) == 2, "the page under way, again"
        assert (report["pages_seen"], report["changed"]) == (6, 5), "the counts go on too"
    finally:
        worker.cancel()
        await site.close()
        await kb.close()


async def test_two_processes_on_one_store_crawl_once(crawl):
    site, kb, settings = crawl.site, crawl.kb, crawl.settings
    storage = Storage(settings.storage, settings.bot.data_dir)
    try:
        other_store = await SqlCrawlStore.open(await storage.database("catalog"))
        other = CrawlService(kb, other_store, lambda: settings)
        reports = await asyncio.gather(crawl.service.tick(), other.tick())
        assert sorted(len(r) for r in reports) == [0, 1], "one of them crawled"
        assert all(
            len(site.requests_of(path)) == 1 for path in INDEXED if path != "/docs/new-home.html"
        )
        assert await asyncio.gather(crawl.service.tick(), other.tick()) == [[], []], "not due"
    finally:
        await storage.close()


async def test_the_report_is_served_at_the_ops_endpoint_and_the_api(crawl):
    report = await run_once(crawl.service)
    settings = crawl.settings
    ops = TestClient(
        TestServer(OpsServer(lambda: settings, Metrics(), lambda: "ok", crawl.kb).build_app())
    )
    api = TestClient(TestServer(IngestApi(crawl.kb, lambda: settings).build_app()))
    await ops.start_server()
    await api.start_server()
    try:
        response = await ops.get("/crawls")
        [status] = (await response.json())["crawls"]
        assert (status["source"], status["state"], status["last_run"]) == ("site", "idle", report)
        assert status["next_run_at"] == pytest.approx(report["finished_at"] + 86400)
        assert (await api.get("/api/v1/crawls")).status == 401
        response = await api.get("/api/v1/crawls", headers={"Authorization": "Bearer wiki-token"})
        assert await response.json() == {"crawls": [status]}
    finally:
        await ops.close()
        await api.close()


async def test_a_crawled_source_without_a_token_never_authenticates(crawl):
    api = TestClient(TestServer(IngestApi(crawl.kb, lambda: crawl.settings).build_app()))
    await api.start_server()
    try:
        for header in ("Bearer ", "Bearer  ", "Bearer"):
            response = await api.put(
                "/api/v1/collections/docs/documents/x",
                json={"title": "T", "content": "c"},
                headers={"Authorization": header},
            )
            assert response.status == 401
    finally:
        await api.close()


LINKED = """
[sources.site]
crawl = ["{base}/docs/start.html"]
allow = ["{base}/docs/"]
requests_per_second = 1000
private_addresses = true
max_pages = 3

[collections.docs]
source = "site"
public = true
"""


async def test_start_pages_lead_to_their_links_breadth_first_within_max_pages(
    tmp_path, embedders, storage_toml
):
    site = DocsSite()
    site.pages = {
        "/docs/start.html": Page(
            "Start",
            "Welcome to the handbook.",
            links=("a.html", "/docs/private/x.html", "../outside.html", "b.html"),
        ),
        "/docs/a.html": Page("A", "Alpha page about trains.", links=("c.html",)),
        "/docs/b.html": Page("B", "Beta page about hotels.", "last-modified"),
        "/docs/c.html": Page("C", "Gamma page, beyond max_pages."),
        "/docs/private/x.html": Page("X", "Private."),
    }
    await site.start()
    settings = site_settings(tmp_path, site, storage_toml, LINKED)
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    worker = asyncio.create_task(kb.queue.run())
    service = CrawlService(kb, kb.crawls, lambda: settings)
    try:
        await service.tick()
        expected = ["/docs/a.html", "/docs/b.html", "/docs/start.html"]
        assert sorted(await indexed(kb, site)) == expected
        assert site.requests_of("/docs/c.html") == [] == site.requests_of("/docs/private/x.html")
        await kb.crawls.db.execute("UPDATE crawl_runs SET finished_at = 0")
        [report] = await service.tick()
        assert (report["unchanged"], report["removed"]) == (3, 0), "304 pages keep their links"
        assert sorted(await indexed(kb, site)) == expected
    finally:
        worker.cancel()
        await site.close()
        await kb.close()


async def test_a_hub_that_redirects_to_a_login_once_does_not_take_its_pages_along(
    tmp_path, embedders, storage_toml
):
    """A start page that now leads out of the site (a sign-in page, say) is removed, but
    the pages only it linked to are kept while it does: what is unreached is unknown
    then. Once it answers again, a page it no longer links to goes."""
    site = DocsSite()
    site.pages = {
        "/docs/start.html": Page("Start", "Welcome to the handbook.", links=("a.html", "b.html")),
        "/docs/a.html": Page("A", "Alpha page about trains."),
        "/docs/b.html": Page("B", "Beta page about hotels."),
        "/elsewhere/login.html": Page("Sign in", "Sign in to continue."),
    }
    await site.start()
    settings = site_settings(tmp_path, site, storage_toml, LINKED.replace("max_pages = 3", ""))
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    worker = asyncio.create_task(kb.queue.run())
    service = CrawlService(kb, kb.crawls, lambda: settings)
    try:
        await service.tick()
        assert sorted(await indexed(kb, site)) == [
            "/docs/a.html",
            "/docs/b.html",
            "/docs/start.html",
        ]
        site.redirects["/docs/start.html"] = "/elsewhere/login.html"
        await kb.crawls.db.execute("UPDATE crawl_runs SET finished_at = 0")
        [report] = await service.tick()
        assert report["removed"] == 1 and report["complete"] is False
        assert sorted(await indexed(kb, site)) == ["/docs/a.html", "/docs/b.html"]
        await kb.crawls.db.execute("UPDATE crawl_runs SET finished_at = 0")
        await service.tick()
        assert sorted(await indexed(kb, site)) == ["/docs/a.html", "/docs/b.html"]
        del site.redirects["/docs/start.html"]
        site.pages["/docs/start.html"] = Page(
            "Start", "Welcome to the handbook.", links=("a.html",)
        )
        await kb.crawls.db.execute("UPDATE crawl_runs SET finished_at = 0")
        [report] = await service.tick()
        assert report["complete"] is True
        assert sorted(await indexed(kb, site)) == ["/docs/a.html", "/docs/start.html"]
    finally:
        worker.cancel()
        await site.close()
        await kb.close()


async def test_the_crawl_runs_from_the_knowledge_services(tmp_path, embedders, storage_toml):
    """run_knowledge_services starts the crawls where this process indexes."""
    from core.serve import run_knowledge_services

    site = await build_site().start()
    settings = site_settings(tmp_path, site, storage_toml)
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    services = asyncio.create_task(run_knowledge_services(kb, lambda: settings))
    try:
        async with asyncio.timeout(120):
            # The report row is the event: written once the run has finished.
            while not ((row := await kb.crawls.run_row("site")) and row.report):  # noqa: ASYNC110
                await asyncio.sleep(0.1)
        assert row.report["changed"] == 5
    finally:
        services.cancel()
        await asyncio.gather(services, return_exceptions=True)
        await site.close()
        await kb.close()


async def test_a_site_on_a_private_address_is_refused_unless_the_source_allows_it(
    tmp_path, embedders, storage_toml
):
    """The test site is on the loopback: without `private_addresses` no request reaches
    it (nor would a redirect or sitemap entry to the host's own services or a cloud's
    metadata address), and nothing is indexed or removed."""
    site = await build_site().start()
    refused = SITE.replace("private_addresses = true\n", "")
    settings = site_settings(tmp_path, site, storage_toml, refused)
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    try:
        report = await run_once(CrawlService(kb, kb.crawls, lambda: settings))
        # The sitemap did not answer: nothing listed, fetched, indexed, or removed.
        assert site.log == [] and report["changed"] == 0 and report["complete"] is False
        assert await indexed(kb, site) == {}
    finally:
        await site.close()
        await kb.close()
