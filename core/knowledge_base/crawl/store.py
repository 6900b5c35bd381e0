"""The crawler's state, kept with the catalog: each page's validators, content hash and
links; the run in progress with its frontier and counts; the last report; and the lease
that lets one process crawl a source at a time (as the ingestion jobs are claimed, see
core/knowledge/ingest/jobs.py).

A page's row changes in the same transaction that marks it done in the frontier, so a
run stopped at any point goes on from the next page after a restart."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from core.knowledge_base.crawl.decide import PageState
from core.knowledge_base.crawl.frontier import Entry
from core.storage.database import Database, Row
from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

TABLES = """
CREATE TABLE IF NOT EXISTS crawl_pages (
    source TEXT NOT NULL, url TEXT NOT NULL, doc_id TEXT NOT NULL, etag TEXT NOT NULL,
    last_modified TEXT NOT NULL, body_hash TEXT NOT NULL, links TEXT NOT NULL,
    PRIMARY KEY (source, url)
);
CREATE TABLE IF NOT EXISTS crawl_frontier (
    source TEXT NOT NULL, url TEXT NOT NULL, position INTEGER NOT NULL,
    follow INTEGER NOT NULL, done INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (source, url)
);
CREATE INDEX IF NOT EXISTS crawl_frontier_order ON crawl_frontier (source, done, position);
CREATE TABLE IF NOT EXISTS crawl_runs (
    source TEXT PRIMARY KEY, running INTEGER NOT NULL DEFAULT 0, fingerprint TEXT,
    started_at {real}, finished_at {real}, counts TEXT, report TEXT,
    holder TEXT, lease_until {real}
);
"""
UPGRADES = UpgradeTable(
    "crawls",
    [
        Upgrade(
            "crawled pages, the run in progress and its frontier, the lease",
            TABLES.format(real="REAL"),
            TABLES.format(real="DOUBLE PRECISION"),
        )
    ],
)


@dataclass(frozen=True)
class RunRow:
    """A source's row: the run in progress (if `running`), the last finished one."""

    source: str
    running: bool
    fingerprint: str
    started_at: float | None
    finished_at: float | None
    counts: dict[str, Any]
    report: dict[str, Any] | None
    holder: str | None
    lease_until: float | None


def _run(row: Row) -> RunRow:
    source, running, fingerprint, started, finished, counts, report, holder, until = row
    return RunRow(
        source,
        bool(running),
        fingerprint or "",
        started,
        finished,
        json.loads(counts) if counts else {},
        json.loads(report) if report else None,
        holder,
        until,
    )


RUN_COLUMNS = (
    "source, running, fingerprint, started_at, finished_at, counts, report, holder, lease_until"
)


class SqlCrawlStore(SqlStore):
    upgrades = UPGRADES

    async def void_dead_leases(self) -> None:
        """The crawler starts: on SQLite (one crawling process per file), a lease left by
        a process that died is void. Only the crawler does this: a tool that opens the
        catalog meanwhile (`knowledge-ingest --dry-run`) would end a running crawl."""
        if self.db.dialect == "sqlite":
            await self.db.execute("UPDATE crawl_runs SET holder = NULL, lease_until = NULL")

    # The lease: one process crawls a source at a time.

    async def claim(self, source: str, worker: str, now: float, lease_seconds: float) -> bool:
        """Take the source's lease if no one else holds a live one."""
        await self.db.execute(
            "INSERT INTO crawl_runs (source) VALUES (?) ON CONFLICT (source) DO NOTHING", source
        )
        changed = await self.db.execute(
            "UPDATE crawl_runs SET holder = ?, lease_until = ? WHERE source = ?"
            " AND (holder IS NULL OR holder = ? OR lease_until < ?)",
            worker,
            now + lease_seconds,
            source,
            worker,
            now,
        )
        return changed == 1

    async def renew(self, source: str, worker: str, until: float) -> bool:
        """Keep the lease; False when it was lost (it ran out and another took it)."""
        changed = await self.db.execute(
            "UPDATE crawl_runs SET lease_until = ? WHERE source = ? AND holder = ?",
            until,
            source,
            worker,
        )
        return changed == 1

    async def release(self, source: str, worker: str) -> None:
        await self.db.execute(
            "UPDATE crawl_runs SET holder = NULL, lease_until = NULL"
            " WHERE source = ? AND holder = ?",
            source,
            worker,
        )

    # Runs.

    async def run_row(self, source: str) -> RunRow | None:
        row = await self.db.fetchrow(
            f"SELECT {RUN_COLUMNS} FROM crawl_runs WHERE source = ?", source
        )
        return _run(row) if row else None

    async def run_rows(self) -> list[RunRow]:
        rows = await self.db.fetch(f"SELECT {RUN_COLUMNS} FROM crawl_runs ORDER BY source")
        return [_run(row) for row in rows]

    async def begin_run(
        self,
        source: str,
        fingerprint: str,
        started_at: float,
        entries: list[Entry],
        counts: dict[str, Any],
    ) -> None:
        """A new run with its first frontier (a run left unfinished is dropped)."""
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM crawl_frontier WHERE source = ?", source)
            await tx.executemany(
                "INSERT INTO crawl_frontier (source, url, position, follow) VALUES (?, ?, ?, ?)",
                [(source, e.url, n, int(e.follow)) for n, e in enumerate(entries)],
            )
            await tx.execute(
                "INSERT INTO crawl_runs (source) VALUES (?) ON CONFLICT (source) DO NOTHING",
                source,
            )
            await tx.execute(
                "UPDATE crawl_runs SET running = 1, fingerprint = ?, started_at = ?,"
                " counts = ? WHERE source = ?",
                fingerprint,
                started_at,
                json.dumps(counts),
                source,
            )

    async def frontier(self, source: str) -> tuple[list[str], list[Entry]]:
        """The saved run's done URLs and its queued entries, in order."""
        rows = await self.db.fetch(
            "SELECT url, follow, done FROM crawl_frontier WHERE source = ? ORDER BY position",
            source,
        )
        done = [url for url, _, finished in rows if finished]
        return done, [Entry(url, bool(follow)) for url, follow, finished in rows if not finished]

    async def finish_run(self, source: str, finished_at: float, report: dict[str, Any]) -> None:
        async with self.db.transaction() as tx:
            await tx.execute("DELETE FROM crawl_frontier WHERE source = ?", source)
            await tx.execute(
                "UPDATE crawl_runs SET running = 0, finished_at = ?, counts = NULL,"
                " report = ? WHERE source = ?",
                finished_at,
                json.dumps(report),
                source,
            )

    # Pages.

    async def pages(self, source: str) -> dict[str, PageState]:
        rows = await self.db.fetch(
            "SELECT url, doc_id, etag, last_modified, body_hash, links FROM crawl_pages"
            " WHERE source = ?",
            source,
        )
        return {
            url: PageState(url, doc_id, etag, modified, body_hash, tuple(json.loads(links)))
            for url, doc_id, etag, modified, body_hash, links in rows
        }

    async def record(
        self,
        source: str,
        url: str,
        page: PageState | None,
        *,
        previous: bool,
        new_entries: Iterable[tuple[int, Entry]],
        counts: dict[str, Any],
    ) -> None:
        """One fetched page, in one transaction: its state (None: forgotten), its place
        in the frontier done, the entries its links added, the run's counts."""
        async with self.db.transaction() as tx:
            if page is None and previous:
                await tx.execute(
                    "DELETE FROM crawl_pages WHERE source = ? AND url = ?", source, url
                )
            elif page is not None:
                await _put_page(tx, source, page)
            await tx.execute(
                "UPDATE crawl_frontier SET done = 1 WHERE source = ? AND url = ?", source, url
            )
            await tx.executemany(
                "INSERT INTO crawl_frontier (source, url, position, follow) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (source, url) DO NOTHING",
                [(source, e.url, n, int(e.follow)) for n, e in new_entries],
            )
            await tx.execute(
                "UPDATE crawl_runs SET counts = ? WHERE source = ?", json.dumps(counts), source
            )

    async def put_page(self, source: str, page: PageState) -> None:
        await _put_page(self.db, source, page)

    async def forget_pages(self, source: str, urls: Iterable[str]) -> None:
        await self.db.executemany(
            "DELETE FROM crawl_pages WHERE source = ? AND url = ?", [(source, u) for u in urls]
        )


async def _put_page(db: Database, source: str, page: PageState) -> None:
    await db.execute(
        "INSERT INTO crawl_pages (source, url, doc_id, etag, last_modified, body_hash, links)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source, url) DO UPDATE SET"
        " doc_id = excluded.doc_id, etag = excluded.etag,"
        " last_modified = excluded.last_modified, body_hash = excluded.body_hash,"
        " links = excluded.links",
        source,
        page.url,
        page.doc_id,
        page.etag,
        page.last_modified,
        page.body_hash,
        json.dumps(page.links),
    )
