"""The start of a run: the crawl URLs become its first frontier. Sitemaps (and the
sitemaps a sitemap index lists) give their pages; start pages are taken as they are,
and their links are followed as the run fetches them."""

from __future__ import annotations

import asyncio
import logging
from collections import deque

from core.knowledge_base.crawl.fetcher import Fetcher
from core.knowledge_base.crawl.frontier import Frontier
from core.knowledge_base.crawl.robots import Robots
from core.knowledge_base.crawl.sitemap import NotASitemap, parse_sitemap
from core.knowledge_base.crawl.urls import is_sitemap_url, normalize_url, origin_of

log = logging.getLogger(__name__)
# Sitemaps one run reads at most (an index listing indexes could go on for long).
MAX_SITEMAPS = 1000
MAX_SITEMAP_BYTES = 50_000_000


class Discovery:
    """Fills a new run's frontier. `complete` is False when a sitemap or robots.txt did
    not answer: pages not reached may then still exist, so none is removed this run."""

    def __init__(self, fetcher: Fetcher, robots: Robots, interval: float) -> None:
        self.fetcher = fetcher
        self.robots = robots
        self.interval = interval
        self.complete = True
        self.requests = 0

    async def take(self, frontier: Frontier, url: str, follow: bool) -> bool:
        """Add a page (a normalised URL) if the rules let it be requested (rules.py; a
        robots.txt that did not answer: added, the page's fetch will count as failed)."""
        if await self.robots.admit(url) not in ("go", "unknown"):
            return False
        return frontier.add(url, follow)

    async def fill(self, frontier: Frontier, crawl: tuple[str, ...]) -> None:
        sitemaps: deque[str] = deque()
        for raw in crawl:
            url = normalize_url(raw)
            if url is None:
                continue
            if is_sitemap_url(url):
                sitemaps.append(url)
            else:
                await self.take(frontier, url, follow=True)
        read: set[str] = set()
        while sitemaps and len(read) < MAX_SITEMAPS:
            url = sitemaps.popleft()
            if url in read:
                continue
            read.add(url)
            for kind, loc in await self._entries(url):
                if kind == "sitemapindex":
                    # Only the site's own sitemaps (the protocol's rule for an index).
                    if origin_of(loc) == origin_of(url):
                        sitemaps.append(loc)
                else:
                    await self.take(frontier, loc, follow=False)

    async def _entries(self, url: str) -> list[tuple[str, str]]:
        """(kind, normalized loc) of a sitemap; nothing when it is gone or unreadable."""
        fetched = await self.fetcher.get(
            url, interval=self.interval, limit=MAX_SITEMAP_BYTES, admit=self.robots.support(url)
        )
        self.requests += fetched.requests
        if fetched.status in (404, 410):
            log.info(
                "crawl: sitemap %s is gone (%d): its pages are not listed", url, fetched.status
            )
            return []
        if fetched.status != 200 or fetched.too_large:
            self.complete = False
            log.warning("crawl: sitemap %s did not answer (%s)", url, fetched.why)
            return []
        try:
            # Parsing off the event loop: a sitemap may hold 50,000 entries.
            sitemap = await asyncio.to_thread(parse_sitemap, fetched.body)
        except NotASitemap as exc:
            self.complete = False
            log.warning("crawl: %s is not a sitemap: %s", url, exc)
            return []
        locs = (normalize_url(entry.loc, fetched.url) for entry in sitemap.entries)
        return [(sitemap.kind, loc) for loc in locs if loc]
