"""A documentation website on loopback for the crawler's tests and benchmark: an aiohttp
server with robots.txt, a sitemap index and its sitemap, pages that send an ETag or a
Last-Modified (and answer 304 to a conditional request), pages without either, redirects
(inside and outside the allowed prefix, or to another server), a PDF, and a log of every
request, with its path as it was sent (`raw_path`: dot segments and escapes untouched).

The test changes the site while it runs: `pages`, `sitemap`, `failing` (503) and
`gates` (a request that waits until the test lets it through)."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from typing import Literal

from aiohttp import web
from aiohttp.test_utils import TestServer

Validator = Literal["etag", "last-modified", "none"]
ROBOTS = "User-agent: *\nDisallow: /docs/private/\n"


@dataclass
class Page:
    title: str
    text: str = ""
    validator: Validator = "etag"
    links: tuple[str, ...] = ()
    body: bytes | None = None  # a file instead of HTML
    content_type: str = "text/html; charset=utf-8"
    modified: datetime = field(default_factory=lambda: datetime(2024, 5, 1, tzinfo=UTC))

    def render(self) -> bytes:
        if self.body is not None:
            return self.body
        links = "".join(f'<li><a href="{href}">{href}</a></li>' for href in self.links)
        return (
            f"<html><head><title>{self.title}</title></head><body><nav><ul>{links}</ul></nav>"
            f"<h1>{self.title}</h1><p>{self.text}</p></body></html>"
        ).encode()


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    conditional: bool
    raw_path: str = ""  # as sent, before the server decodes and resolves anything


class DocsSite:
    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.redirects: dict[str, str] = {}  # path → a path of this site, or a URL
        self.sitemap: list[str] = []  # paths listed in /sitemaps/pages.xml
        self.robots = ROBOTS
        self.failing: set[str] = set()
        self.gates: dict[str, asyncio.Event] = {}
        self.reached: dict[str, asyncio.Event] = {}
        self.log: list[Request] = []
        self._server: TestServer | None = None

    @property
    def base(self) -> str:
        assert self._server is not None
        return str(self._server.make_url("")).rstrip("/")

    async def start(self) -> DocsSite:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self._handle)
        self._server = TestServer(app, host="127.0.0.1")
        await self._server.start_server()
        return self

    async def close(self) -> None:
        for gate in self.gates.values():
            gate.set()
        if self._server is not None:
            await self._server.close()

    def change(self, path: str, text: str) -> None:
        """New text for a page, with a new ETag or a later Last-Modified."""
        page = self.pages[path]
        page.text = text
        page.modified += timedelta(days=1)

    def requests_of(self, path: str) -> list[Request]:
        return [r for r in self.log if r.path == path]

    def raw_paths(self) -> list[str]:
        """Every request's path as it was sent."""
        return [r.raw_path for r in self.log]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        conditional = "If-None-Match" in request.headers or "If-Modified-Since" in request.headers
        self.log.append(Request(request.method, path, conditional, request.raw_path))
        if path in self.reached:
            self.reached[path].set()
        if path in self.gates:
            await self.gates[path].wait()
        if path in self.failing:
            return web.Response(status=503, text="down for maintenance")
        if path == "/robots.txt":
            return web.Response(text=self.robots)
        if path == "/sitemap_index.xml":
            return self._xml("sitemapindex", "sitemap", ["/sitemaps/pages.xml"])
        if path == "/sitemaps/pages.xml":
            return self._xml("urlset", "url", self.sitemap)
        if path in self.redirects:
            target = self.redirects[path]
            # Sent as written (no URL library between): hostile spellings stay hostile.
            location = target if "://" in target else self.base + target
            return web.Response(status=301, headers={"Location": location})
        page = self.pages.get(path)
        if page is None:
            return web.Response(status=404, text="not found")
        body = page.render()
        headers = {"Content-Type": page.content_type}
        if page.validator == "etag":
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            headers["ETag"] = etag
            if request.headers.get("If-None-Match") == etag:
                return web.Response(status=304, headers={"ETag": etag})
        elif page.validator == "last-modified":
            headers["Last-Modified"] = format_datetime(page.modified, usegmt=True)
            since = request.headers.get("If-Modified-Since")
            if since and parsedate_to_datetime(since) >= page.modified:
                return web.Response(status=304)
        return web.Response(body=body, headers=headers)

    def _xml(self, root: str, item: str, paths: list[str]) -> web.Response:
        entries = "".join(
            f"<{item}><loc>{self.base}{path}</loc><lastmod>2024-05-01</lastmod></{item}>"
            for path in paths
        )
        xml = (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<{root} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</{root}>'
        )
        return web.Response(text=xml, content_type="application/xml")
