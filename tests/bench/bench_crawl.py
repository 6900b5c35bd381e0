"""Crawl throughput on a generated documentation site served on loopback.

    .venv/bin/python -m tests.bench.bench_crawl [--pages 300] [--rate 1000]

A site of `pages` HTML pages (a few paragraphs each; half send an ETag, half a
Last-Modified) listed in a sitemap index and its sitemap (tests/support/docs_site.py).
The crawler runs as the bot runs it (CrawlService, the queue worker, the real embedding
model, embedded Chroma, SQLite), at `rate` requests per second at most:

1. the first run: every page fetched, read and indexed (the run ends once its pages
   are indexed, so the figure includes embedding);
2. the second run, nothing changed: one conditional request per page, each a 304;
3. a third run with every page changed: fetched whole and indexed again.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from core.knowledge_base.base import KnowledgeBase
from core.knowledge_base.crawl.schedule import CrawlService
from tests.knowledge.conftest import knowledge_settings
from tests.support.docs_site import DocsSite, Page

SITE = """
[sources.site]
crawl = ["{base}/sitemap_index.xml"]
allow = ["{base}/docs/"]
requests_per_second = {rate}
private_addresses = true
max_pages = 100000

[collections.docs]
source = "site"
public = true
"""


def text(n: int, edition: int) -> str:
    return (
        f"Section {n} of edition {edition}. Trains to office {n} are booked {n % 5 + 1} weeks "
        f"ahead; hotels near it cost at most {90 + n % 60} euros a night. " * 6
    )


async def crawl(pages: int, rate: float, folder: Path) -> None:
    site = DocsSite()
    site.pages = {
        f"/docs/page-{n}.html": Page(f"Page {n}", text(n, 1), "etag" if n % 2 else "last-modified")
        for n in range(pages)
    }
    site.sitemap = list(site.pages)
    await site.start()
    settings = knowledge_settings(folder, extra=SITE.format(base=site.base, rate=rate))
    kb = await KnowledgeBase.open(lambda: settings)
    worker = asyncio.create_task(kb.queue.run())
    service = CrawlService(kb, kb.crawls, lambda: settings)
    try:
        # The model loaded before the clock starts, as run_knowledge_services does.
        await kb.embedders.get(settings.knowledge.embedding_model).embed(["warm-up"])
        for label, change in (
            ("first run", False),
            ("unchanged second run", False),
            ("every page changed", True),
        ):
            if change:
                for path in site.pages:
                    site.change(path, text(int(path.split("-")[1].split(".")[0]), 2))
            await kb.crawls.db.execute("UPDATE crawl_runs SET finished_at = 0")
            started = time.perf_counter()
            [report] = await service.tick()
            seconds = time.perf_counter() - started
            print(
                f"{label}: {report['pages_seen']} pages in {seconds:.2f} s "
                f"({report['pages_seen'] / seconds:.0f} pages/s): {report['changed']} changed, "
                f"{report['unchanged']} unchanged, {report['requests']} requests"
            )
    finally:
        worker.cancel()
        await site.close()
        await kb.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--rate", type=float, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        await crawl(args.pages, args.rate, Path(folder))


if __name__ == "__main__":
    asyncio.run(main())
