"""The crawl loop of a process: every crawled source of the live config runs when its
schedule says, in a task of its own, in one process at a time (a lease in the crawl
store, renewed while the run lasts).

The config is read again at every check (every CHECK_SECONDS): a source added, a
schedule changed or a crawl removed applies within that time without a restart; a run
under way keeps the settings it started with, and a run of a source no longer crawled
is stopped. A run left unfinished by a restart goes on at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from core.config import Settings
from core.knowledge_base.base import KnowledgeBase
from core.knowledge_base.crawl.crawler import CrawlRun
from core.knowledge_base.crawl.decide import decide_due
from core.knowledge_base.crawl.store import SqlCrawlStore
from core.storage.database import StorageError

log = logging.getLogger(__name__)

CHECK_SECONDS = 30.0
# The lease of a source's run: renewed every third of it; a process that died without
# giving it back holds it this long after its last renewal.
LEASE_SECONDS = 120.0


def crawled_sources(settings: Settings) -> dict[str, str]:
    """Each crawled source and the one collection it fills (a source with none is left
    out: the config refuses it whenever it has a [collections] table)."""
    found = {}
    for name, source in settings.sources.items():
        owned = [c for c, collection in settings.collections.items() if collection.source == name]
        if source.crawl and len(owned) == 1:
            found[name] = owned[0]
    return found


class CrawlService:
    def __init__(
        self, kb: KnowledgeBase, store: SqlCrawlStore, settings: Callable[[], Settings]
    ) -> None:
        self.kb, self.store, self.settings = kb, store, settings
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._runs: dict[str, asyncio.Task[dict[str, Any] | None]] = {}

    async def run(self) -> None:
        """Start the runs that are due, until cancelled (then the runs stop too)."""
        try:
            await self.store.void_dead_leases()
        except StorageError as exc:  # they end with their leases
            log.warning("crawl leases of an earlier run kept until they end: %s", exc)
        try:
            while True:
                try:
                    self.start_due()
                except StorageError as exc:
                    log.warning("crawls wait for the database: %s", exc)
                await asyncio.sleep(CHECK_SECONDS)
        finally:
            for task in self._runs.values():
                task.cancel()
            await asyncio.gather(*self._runs.values(), return_exceptions=True)

    async def tick(self) -> list[dict[str, Any]]:
        """Start what is due and wait for those runs: their reports (a source that another
        process crawls, or that is not due, gives none)."""
        tasks = self.start_due()
        results = await asyncio.gather(*tasks)
        return [report for report in results if report is not None]

    def start_due(self) -> list[asyncio.Task[dict[str, Any] | None]]:
        """A task for each crawled source not already running here; each checks whether
        its source is due once it holds the lease."""
        wanted = crawled_sources(self.settings())
        for name, task in list(self._runs.items()):
            if task.done():
                del self._runs[name]
            elif name not in wanted:
                log.info("crawl of %s stops: the source is no longer crawled", name)
                task.cancel()
        started = []
        for name, collection in wanted.items():
            if name not in self._runs:
                task = asyncio.create_task(self._run_if_due(name, collection))
                self._runs[name] = task
                started.append(task)
        return started

    async def _run_if_due(self, name: str, collection: str) -> dict[str, Any] | None:
        try:
            row = await self.store.run_row(name)
            source = self.settings().sources[name]
            finished = row.finished_at if row else None
            if not decide_due(source.schedule, finished, bool(row and row.running), time.time()):
                return None
            if not await self.store.claim(name, self.worker, time.time(), LEASE_SECONDS):
                return None  # another process crawls it
            async with self._holding(name):
                # Read again under the lease: another process may have just finished it.
                row = await self.store.run_row(name)
                finished = row.finished_at if row else None
                running = bool(row and row.running)
                if not decide_due(source.schedule, finished, running, time.time()):
                    return None
                return await CrawlRun(self.kb, self.store, self.settings, name, collection).run()
        except asyncio.CancelledError:
            raise
        except Exception:  # one source's failure must not stop the others, nor answers
            log.exception("the crawl of %s failed; it is tried again at the next check", name)
            return None

    @contextlib.asynccontextmanager
    async def _holding(self, name: str) -> AsyncIterator[None]:
        """Renew the lease while the block runs; a lost lease stops the run (another
        process has taken the source over); the lease is given back at the end."""
        run = asyncio.current_task()
        assert run is not None

        async def renew() -> None:
            while True:
                await asyncio.sleep(LEASE_SECONDS / 3)
                try:
                    kept = await self.store.renew(name, self.worker, time.time() + LEASE_SECONDS)
                except StorageError as exc:
                    log.warning("the crawl lease of %s was not renewed: %s", name, exc)
                    continue
                if not kept:
                    log.warning("the crawl lease of %s was lost; the run stops here", name)
                    run.cancel()
                    return

        renewing = asyncio.create_task(renew())
        try:
            yield
        finally:
            renewing.cancel()
            try:
                await asyncio.shield(self.store.release(name, self.worker))
            except StorageError as exc:
                log.warning("the crawl lease of %s is kept until it ends: %s", name, exc)
