"""The crawler's rules hold for the URL it requests, and at every redirect hop: robots.txt
(RFC 9309, wildcards included), the `allow` prefixes and the address check. Against sites
on loopback that record every request as it was sent (tests/support/docs_site.py); what
was requested is read from those logs once the run's report is in."""

from __future__ import annotations

import asyncio
import socket

from core.knowledge_base.base import KnowledgeBase
from core.knowledge_base.crawl.fetcher import PublicResolver
from core.knowledge_base.crawl.schedule import CrawlService
from tests.knowledge.conftest import knowledge_settings
from tests.knowledge.test_crawl import indexed
from tests.support.docs_site import DocsSite, Page

CONFIG = """
[sources.site]
crawl = ["{start}"]
allow = [{allow}]
requests_per_second = 1000
private_addresses = {private}

[collections.docs]
source = "site"
public = true
"""
OK = Page("OK", "Trains to the Lyon office are booked two weeks ahead.")
HIDDEN = Page("Hidden", "The salary bands are a secret of the board.")


async def crawl_once(
    tmp_path,
    embedders,
    storage_toml,
    site: DocsSite,
    *,
    base: str = "",
    allow: tuple[str, ...] = (),
    private: bool = True,
) -> tuple[dict, list[str]]:
    """One run from `/docs/start.html`, to its report: the report and the paths indexed."""
    base = base or site.base
    config = CONFIG.format(
        start=f"{base}/docs/start.html",
        allow=", ".join(f'"{prefix}"' for prefix in (f"{base}/docs/", *allow)),
        private=str(private).lower(),
    )
    settings = knowledge_settings(tmp_path, extra=config + storage_toml)
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    worker = asyncio.create_task(kb.queue.run())
    try:
        [report] = await CrawlService(kb, kb.crawls, lambda: settings).tick()
        docs = await indexed(kb, site)
        return report, sorted(doc.removeprefix(base) for doc in docs)
    finally:
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
        await kb.close()


def start(*links: str) -> Page:
    return Page("Start", "Welcome to the handbook.", links=links)


async def test_dot_segments_are_resolved_before_robots_txt_and_allow(
    tmp_path, embedders, storage_toml
):
    site = await DocsSite().start()
    base = site.base
    site.pages = {
        "/docs/start.html": start(
            f"{base}/docs/x/../private/salaries.html",  # sent as /docs/private/…: Disallow
            f"{base}/docs/../admin/page.html",  # out of the allow prefix
            "/docs/%2e%2e/admin/encoded.html",  # the same, its dots escaped
            "/docs/..%2Fadmin/slash.html",  # for a server that decodes %2F first
            "/docs/..;/admin/tomcat.html",  # for a server that drops ;params first
            "ok.html",
        ),
        "/docs/ok.html": OK,
        "/docs/private/salaries.html": HIDDEN,
        "/admin/page.html": HIDDEN,
    }
    try:
        report, docs = await crawl_once(tmp_path, embedders, storage_toml, site)
    finally:
        await site.close()
    sent = site.raw_paths()
    assert [path for path in sent if "private" in path or "admin" in path] == [], sent
    assert sent.count("/docs/ok.html") == 1
    assert docs == ["/docs/ok.html", "/docs/start.html"]
    assert report["failed"] == 0


async def test_robots_txt_wildcards_are_honoured(tmp_path, embedders, storage_toml):
    site = await DocsSite().start()
    site.robots = "User-agent: *\nDisallow: /*.pdf$\n"
    site.pages = {
        "/docs/start.html": start("a/b.pdf", "a/b.pdf?download=1", "ok.html"),
        "/docs/a/b.pdf": OK,
        "/docs/ok.html": OK,
    }
    try:
        _, docs = await crawl_once(tmp_path, embedders, storage_toml, site)
    finally:
        await site.close()
    sent = site.raw_paths()
    assert "/docs/a/b.pdf" not in sent
    assert "/docs/a/b.pdf?download=1" in sent, "$ anchors the rule at the end of the URL"
    assert docs == ["/docs/a/b.pdf?download=1", "/docs/ok.html", "/docs/start.html"]


async def test_a_redirect_into_a_disallowed_path_is_not_followed(tmp_path, embedders, storage_toml):
    site = await DocsSite().start()  # robots.txt: Disallow: /docs/private/
    site.pages = {
        "/docs/start.html": start("moved.html", "dotted.html", "ok.html"),
        "/docs/ok.html": OK,
        "/docs/private/salaries.html": HIDDEN,
    }
    site.redirects = {
        "/docs/moved.html": "/docs/private/salaries.html",
        "/docs/dotted.html": f"{site.base}/docs/x/../private/salaries.html",
    }
    try:
        report, docs = await crawl_once(tmp_path, embedders, storage_toml, site)
    finally:
        await site.close()
    assert [path for path in site.raw_paths() if "private" in path] == []
    assert docs == ["/docs/ok.html", "/docs/start.html"]
    assert report["failed"] == 0


async def test_a_redirect_to_another_origin_on_the_intranet_is_not_followed(
    tmp_path, embedders, storage_toml
):
    """With `private_addresses = true` a page under `allow` that redirects to another
    port or host reaches nothing there: the hop leaves the prefixes."""
    site, canary = await DocsSite().start(), await DocsSite().start()
    canary.pages = {"/docs/secret.html": HIDDEN}
    port, canary_port = site.base.rsplit(":", 1)[1], canary.base.rsplit(":", 1)[1]
    site.pages = {
        "/docs/start.html": start("port.html", "host.html", "v6.html", "self.html", "ok.html"),
        "/docs/ok.html": OK,
    }
    site.redirects = {
        "/docs/port.html": f"{canary.base}/docs/secret.html",
        "/docs/host.html": f"http://localhost:{canary_port}/docs/secret.html",
        "/docs/v6.html": f"http://[::ffff:127.0.0.1]:{canary_port}/docs/secret.html",
        "/docs/self.html": f"http://localhost:{port}/docs/ok.html",
    }
    try:
        report, docs = await crawl_once(tmp_path, embedders, storage_toml, site)
    finally:
        await site.close()
        await canary.close()
    assert canary.log == []
    assert len(site.requests_of("/docs/ok.html")) == 1, "not again through another host name"
    assert docs == ["/docs/ok.html", "/docs/start.html"]
    assert report["failed"] == 0


async def test_a_redirect_to_an_inner_address_in_any_spelling_is_not_followed(
    tmp_path, embedders, storage_toml, monkeypatch
):
    """Without `private_addresses`, the site is reached by a name that (for this test)
    counts as public, and its pages redirect to the loopback canary in every spelling of
    127.0.0.1. The canary's origins are under `allow`: only the address check stops them."""
    site, canary = await DocsSite().start(), await DocsSite().start()
    canary.pages = {"/docs/secret.html": HIDDEN}
    port, canary_port = site.base.rsplit(":", 1)[1], canary.base.rsplit(":", 1)[1]

    async def resolve_as_public(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list:
        return await self._inner.resolve(host, port, family)

    monkeypatch.setattr(PublicResolver, "resolve", resolve_as_public)
    hosts = {
        "loopback": "127.0.0.1",
        "decimal": "2130706433",
        "octal": "0177.0.0.1",
        "hexadecimal": "0x7f.1",
        "mapped": "[::ffff:127.0.0.1]",
        "compatible": "[::127.0.0.1]",
        "6to4": "[2002:7f00:1::]",
        "nat64": "[64:ff9b::127.0.0.1]",
    }
    site.pages = {
        "/docs/start.html": start(*(f"{name}.html" for name in hosts), "ok.html"),
        "/docs/ok.html": OK,
    }
    site.redirects = {
        f"/docs/{name}.html": f"http://{host}:{canary_port}/docs/secret.html"
        for name, host in hosts.items()
    }
    canary_origins = tuple(f"http://{host}:{canary_port}/" for host in hosts.values())
    try:
        report, docs = await crawl_once(
            tmp_path,
            embedders,
            storage_toml,
            site,
            base=f"http://localhost:{port}",
            allow=canary_origins,
            private=False,
        )
    finally:
        await site.close()
        await canary.close()
    assert canary.log == []
    assert sorted(r.path for r in site.log if r.path.startswith("/docs/")) == sorted(
        ["/docs/start.html", "/docs/ok.html", *(f"/docs/{name}.html" for name in hosts)]
    )
    assert docs == ["/docs/ok.html", "/docs/start.html"]
    assert report["failed"] == 0, "refused by the rules, not by a failed connection"
