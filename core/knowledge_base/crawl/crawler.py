"""One crawl run of one source: fetch every page of its frontier, index what changed
through the ingestion queue, remove what is gone, and report.

A run goes on where it stopped after a restart: its frontier and counts are saved with
each page (store.py), unless the source's crawl settings changed meanwhile."""

from __future__ import annotations

import asyncio
import codecs
import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from core.config import Settings
from core.config.knowledge import SourceSettings
from core.knowledge.documents import Document
from core.knowledge.parse.extraction import Unreadable
from core.knowledge_base.base import KnowledgeBase
from core.knowledge_base.crawl.decide import (
    Answer,
    PageState,
    conditional_headers,
    decide_interval,
    decide_orphans,
    decide_page,
    decide_removals,
    kind_of,
)
from core.knowledge_base.crawl.discover import Discovery
from core.knowledge_base.crawl.fetcher import Fetched, Fetcher
from core.knowledge_base.crawl.frontier import Entry, Frontier
from core.knowledge_base.crawl.page import clean_title, read_page
from core.knowledge_base.crawl.report import Counts, build_report, log_report
from core.knowledge_base.crawl.robots import Robots
from core.knowledge_base.crawl.rules import REASONS, build_prefixes
from core.knowledge_base.crawl.store import SqlCrawlStore
from core.knowledge_base.crawl.urls import document_id, is_sitemap_url, normalize_url, origin_of

log = logging.getLogger(__name__)


def fingerprint(source: SourceSettings, collection: str) -> str:
    """What a saved frontier depends on: a run left unfinished goes on only while these
    settings stay the same."""
    what = [collection, source.crawl, source.allowed_prefixes(), source.max_pages]
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Indexed:
    """What a fetched page became: the document to put (if it changed) and its links."""

    document: Document
    links: tuple[str, ...]


class CrawlRun:
    def __init__(
        self,
        kb: KnowledgeBase,
        store: SqlCrawlStore,
        settings: Callable[[], Settings],
        source_name: str,
        collection: str,
    ) -> None:
        self.kb, self.store, self.settings = kb, store, settings
        self.name, self.collection = source_name, collection
        self.source = settings().sources[source_name]
        self.prefixes = build_prefixes(self.source.allowed_prefixes())
        self.start_pages = {
            normalize_url(url) or url for url in self.source.crawl if not is_sitemap_url(url)
        }
        self.interval = decide_interval(self.source.requests_per_second, None)
        self.counts = Counts()
        self.pages: dict[str, PageState] = {}
        self.jobs: list[tuple[int, str]] = []

    async def run(self) -> dict[str, Any]:
        """Crawl to the end; returns the report (also stored and logged)."""
        fetcher = Fetcher(self.source.user_agent, self.source.private_addresses)
        robots = Robots(
            fetcher,
            self.source.user_agent,
            self.interval,
            self.prefixes,
            self.source.private_addresses,
        )
        try:
            frontier, started_at = await self._resume_or_start(fetcher, robots)
            self.pages = await self.store.pages(self.name)
            while (entry := frontier.pop()) is not None:
                await self._page(fetcher, robots, frontier, entry.url, entry.follow)
        finally:
            await fetcher.close()
        await self._wait_for_jobs()
        await self._remove_unreached(frontier.taken)
        finished_at = time.time()
        report = build_report(self.name, self.collection, self.counts, started_at, finished_at)
        await self.store.finish_run(self.name, finished_at, report)
        log_report(report)
        return report

    async def _resume_or_start(self, fetcher: Fetcher, robots: Robots) -> tuple[Frontier, float]:
        limit = self.source.max_pages
        saved = await self.store.run_row(self.name)
        mark = fingerprint(self.source, self.collection)
        if saved and saved.running and saved.fingerprint == mark and saved.started_at:
            done, queued = await self.store.frontier(self.name)
            self.counts = Counts.from_dict(saved.counts)
            log.info(
                "crawl of %s goes on: %d pages done, %d to go", self.name, len(done), len(queued)
            )
            return Frontier(limit, done, queued), saved.started_at
        started_at = time.time()
        frontier = Frontier(limit)
        discovery = Discovery(fetcher, robots, self.interval)
        await discovery.fill(frontier, self.source.crawl)
        self.counts.requests = discovery.requests + robots.requests
        # A list cut at max_pages leaves pages unreached that are not gone.
        self.counts.complete = (
            discovery.complete and not robots.any_unknown() and not frontier.overflowed
        )
        entries = []
        while (entry := frontier.pop()) is not None:
            entries.append(entry)
        await self.store.begin_run(self.name, mark, started_at, entries, self.counts.as_dict())
        log.info("crawl of %s starts: %d pages listed", self.name, len(entries))
        return Frontier(limit, queued=entries), started_at

    async def _page(
        self, fetcher: Fetcher, robots: Robots, frontier: Frontier, url: str, follow: bool
    ) -> None:
        previous = self.pages.get(url)
        before = robots.requests
        self.counts.seen += 1
        state, links = await self._fetch_and_decide(fetcher, robots, url, previous)
        self.counts.requests += robots.requests - before
        added: list[tuple[int, Entry]] = []
        if follow and links:
            discovery = Discovery(fetcher, robots, self.interval)
            before = robots.requests
            for link in links:
                position = len(frontier.taken)
                if await discovery.take(frontier, link, follow=True):
                    added.append((position, Entry(link, follow=True)))
            self.counts.requests += robots.requests - before
            if frontier.overflowed:
                self.counts.complete = False
        if state is None and previous is not None:
            self.pages.pop(url, None)
        elif state is not None:
            self.pages[url] = state
        frontier.finish(url)
        await self.store.record(
            self.name,
            url,
            state,
            previous=previous is not None,
            new_entries=added,
            counts=self.counts.as_dict(),
        )

    async def _fetch_and_decide(
        self, fetcher: Fetcher, robots: Robots, url: str, previous: PageState | None
    ) -> tuple[PageState | None, tuple[str, ...]]:
        """The page's new state (None: forgotten) and the links to follow from it."""
        kept_links = previous.links if previous else ()
        admission = await robots.admit(url)
        if admission == "unknown":
            self.counts.failed += 1
            return previous, kept_links
        if admission != "go":  # refused since the run began: as if gone
            log.info("crawl: %s is %s", url, REASONS[admission])
            await self._remove(url, previous)
            return None, ()
        interval = decide_interval(
            self.source.requests_per_second, robots.crawl_delay(origin_of(url))
        )
        # Each redirect hop is admitted as a link of its own before it is requested.
        fetched = await fetcher.get(
            url,
            interval=interval,
            limit=self._limit(),
            admit=robots.admit,
            headers=conditional_headers(previous),
        )
        self.counts.requests += fetched.requests
        final = fetched.url
        if fetched.refused:
            log.info("crawl: %s is not indexed: %s", url, fetched.why)
        body_hash = hashlib.sha256(fetched.body).hexdigest()
        answer = Answer(
            fetched.status,
            final,
            body_hash,
            fetched.content_type,
            not fetched.refused,
            fetched.too_large,
        )
        doc_id = document_id(final)
        verdict = decide_page(previous, answer, doc_id)
        if url in self.start_pages and verdict not in ("index", "unchanged"):
            # The site's entry does not answer with a page: what is unreached is unknown.
            self.counts.complete = False
        if verdict == "failed":
            self.counts.failed += 1
            log.info("crawl: %s failed (%s); its document is kept", url, fetched.why)
            return previous, kept_links
        if verdict == "remove":
            await self._remove(url, previous)
            if previous and previous.links:
                # The pages reached through it are not gone for that: a hub that
                # redirects to a login page once must not take its subtree along. They
                # go in a later run if they are still unreached then.
                self.counts.complete = False
            return None, ()
        # A 304 may leave out the validators; the last ones sent stay good.
        etag = fetched.etag or (previous.etag if previous else "")
        modified = fetched.last_modified or (previous.last_modified if previous else "")
        if verdict == "unchanged":
            self.counts.unchanged += 1
            assert previous is not None
            return replace(previous, etag=etag, last_modified=modified), kept_links
        indexed = await self._read(fetched, final, doc_id)
        if indexed is None:
            self.counts.failed += 1
            return previous, kept_links
        state = PageState(url, doc_id, etag, modified, body_hash, indexed.links)
        if await self.kb.indexer.decide(indexed.document) == "unchanged":
            self.counts.unchanged += 1
        else:
            self.jobs.append((await self.kb.queue.submit_put(indexed.document), url))
            self.counts.changed += 1
        if previous and previous.doc_id != doc_id:
            await self._delete_orphans({url: previous.doc_id}, {**self.pages, url: state})
        return state, indexed.links

    def _limit(self) -> int:
        settings = self.settings()
        return max(settings.knowledge.max_document_bytes, settings.files.max_bytes)

    async def _read(self, fetched: Fetched, final: str, doc_id: str) -> Indexed | None:
        """The document of a page that changed; None (logged) when it cannot be read."""
        kind = kind_of(fetched.content_type)
        max_bytes = self.settings().knowledge.max_document_bytes
        if kind == "html":
            html = fetched.body.decode(_codec(fetched.charset), "replace")
            if len(html.encode()) > max_bytes:
                log.warning("crawl: %s is over knowledge.max_document_bytes", final)
                return None
            page = await asyncio.to_thread(read_page, html, final)
            links = () if page.nofollow else page.links
            return Indexed(
                Document(self.collection, doc_id, page.title or final, html, "html", url=final),
                links,
            )
        assert kind in ("pdf", "docx")
        try:
            read = await self.kb.extractor.extract(fetched.body, kind)
        except Unreadable as exc:
            log.warning("crawl: %s cannot be read: %s", final, exc)
            return None
        if len(read.content.encode()) > max_bytes:
            log.warning("crawl: the text of %s is over knowledge.max_document_bytes", final)
            return None
        title = clean_title(read.title) or final
        return Indexed(
            Document(self.collection, doc_id, title, read.content, read.format, url=final), ()
        )

    async def _remove(self, url: str, previous: PageState | None) -> None:
        if previous is None:
            return
        self.counts.removed += 1
        log.info("crawl: %s is gone; its document is removed", url)
        remaining = {u: p for u, p in self.pages.items() if u != url}
        await self._delete_orphans({url: previous.doc_id}, remaining)

    async def _delete_orphans(
        self, removed: dict[str, str], remaining: dict[str, PageState]
    ) -> None:
        for doc_id in decide_orphans(removed, {u: p.doc_id for u, p in remaining.items()}):
            self.jobs.append((await self.kb.queue.submit_delete(self.collection, doc_id), ""))

    async def _remove_unreached(self, reached: frozenset[str]) -> None:
        """Pages known from earlier runs that this one did not list or reach."""
        known = {url: page.doc_id for url, page in self.pages.items()}
        gone = decide_removals(known, set(reached), self.counts.complete)
        if not gone:
            return
        remaining = {u: p for u, p in self.pages.items() if u not in gone}
        for url in gone:
            log.info("crawl: %s is no longer listed or allowed; its document is removed", url)
        await self._delete_orphans({url: known[url] for url in gone}, remaining)
        await self.store.forget_pages(self.name, gone)
        self.counts.removed += len(gone)
        await self._wait_for_jobs()

    async def _wait_for_jobs(self) -> None:
        """The run's puts and deletes indexed (by this process's queue worker or another
        one): a put that failed counts as failed, and its page is fetched whole and
        tried again next run."""
        jobs, self.jobs = self.jobs, []
        for job_id, url in jobs:
            await self.kb.queue.wait(job_id)
            job = await self.kb.jobs.job(job_id)
            if job is not None and job.state == "failed" and url in self.pages:
                self.counts.changed -= 1
                self.counts.failed += 1
                self.pages[url] = replace(self.pages[url], etag="", last_modified="", body_hash="")
                await self.store.put_page(self.name, self.pages[url])


def _codec(charset: str | None) -> str:
    """The page's charset if Python knows it, else UTF-8."""
    try:
        return codecs.lookup(charset).name if charset else "utf-8"
    except LookupError:
        return "utf-8"
