"""A run's counts and report, and the status of every crawled source as the ops
endpoint (`GET /crawls`) and the ingestion API (`GET /api/v1/crawls`) serve it."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, fields
from typing import Any

from core.config import Settings
from core.knowledge_base.crawl.decide import next_run_at
from core.knowledge_base.crawl.store import SqlCrawlStore

log = logging.getLogger(__name__)


@dataclass
class Counts:
    """What a run did so far; saved with each page, so a restarted run counts on."""

    seen: int = 0  # pages fetched (or tried)
    changed: int = 0  # new or indexed again
    unchanged: int = 0
    removed: int = 0
    failed: int = 0  # kept as they were: no answer, 5xx, unreadable…
    requests: int = 0  # HTTP requests, robots.txt, sitemaps and redirects included
    # Every sitemap and robots.txt answered: pages not reached are removed at the end.
    complete: bool = True

    @classmethod
    def from_dict(cls, saved: dict[str, Any]) -> Counts:
        names = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in saved.items() if key in names})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def build_report(
    source: str, collection: str, counts: Counts, started_at: float, finished_at: float
) -> dict[str, Any]:
    """The report of a finished run (stored, served, and logged at INFO)."""
    return {
        "source": source,
        "collection": collection,
        "started_at": started_at,
        "finished_at": finished_at,
        "duration_seconds": round(finished_at - started_at, 3),
        "pages_seen": counts.seen,
        "changed": counts.changed,
        "unchanged": counts.unchanged,
        "removed": counts.removed,
        "failed": counts.failed,
        "requests": counts.requests,
        "complete": counts.complete,
    }


def log_report(report: dict[str, Any]) -> None:
    log.info(
        "crawl of %s into %s: %d pages seen, %d changed, %d unchanged, %d removed, "
        "%d failed, %d requests in %.1f s%s",
        report["source"],
        report["collection"],
        report["pages_seen"],
        report["changed"],
        report["unchanged"],
        report["removed"],
        report["failed"],
        report["requests"],
        report["duration_seconds"],
        ""
        if report["complete"]
        else " (a sitemap or robots.txt did not answer: unreached pages kept)",
    )


async def crawl_status(store: SqlCrawlStore, settings: Settings) -> dict[str, Any]:
    """Every crawled source of the config: running or idle, the counts of the run in
    progress, the last finished run's report, and when the next run is due."""
    rows = {row.source: row for row in await store.run_rows()}
    crawls = []
    for name, source in settings.sources.items():
        if not source.crawl:
            continue
        row = rows.get(name)
        finished = row.finished_at if row else None
        running = bool(row and row.running)
        crawls.append(
            {
                "source": name,
                "state": "running" if running else "idle",
                "in_progress": (
                    {"started_at": row.started_at, **row.counts} if row and running else None
                ),
                "last_run": row.report if row else None,
                "next_run_at": None if running else next_run_at(source.schedule, finished),
            }
        )
    return {"crawls": crawls}
