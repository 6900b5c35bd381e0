"""The crawl store on SQLite and PostgreSQL: the lease that lets one process crawl a
source, and a run's frontier and pages as a restarted process finds them."""

from __future__ import annotations

from core.knowledge_base.crawl.decide import PageState
from core.knowledge_base.crawl.frontier import Entry
from core.knowledge_base.crawl.store import SqlCrawlStore


async def test_one_worker_holds_a_source_until_its_lease_ends(open_database):
    first = await SqlCrawlStore.open(await open_database())
    second = await SqlCrawlStore.open(await open_database())
    assert await first.claim("site", "a", now=100, lease_seconds=60)
    assert not await second.claim("site", "b", now=110, lease_seconds=60)
    assert await second.claim("other", "b", now=110, lease_seconds=60), "one lease per source"
    assert await first.renew("site", "a", until=200)
    assert not await second.claim("site", "b", now=190, lease_seconds=60)
    assert await second.claim("site", "b", now=201, lease_seconds=60), "a lease that ran out"
    assert not await first.renew("site", "a", until=300), "a lost lease says so"
    await second.release("site", "b")
    assert await first.claim("site", "a", now=202, lease_seconds=60)


async def test_a_tool_opening_the_store_leaves_a_running_crawls_lease(open_database):
    """`knowledge-ingest --dry-run` opened the catalog while the bot crawled: on SQLite
    the crawl's lease was voided and the run stopped at its next renewal. Only a
    starting crawler voids the leases of a process that died."""
    crawler = await SqlCrawlStore.open(await open_database())
    assert await crawler.claim("site", "bot", now=100, lease_seconds=60)
    await SqlCrawlStore.open(await open_database())  # the tool
    assert await crawler.renew("site", "bot", until=200), "still the bot's"
    restarted = await SqlCrawlStore.open(await open_database())
    await restarted.void_dead_leases()
    taken = await restarted.claim("site", "new", now=150, lease_seconds=60)
    assert taken == (restarted.db.dialect == "sqlite"), "PostgreSQL: when the lease ends"


async def test_a_run_is_found_again_as_it_was_left(open_database):
    store = await SqlCrawlStore.open(await open_database())
    entries = [Entry("https://d/a", False), Entry("https://d/b", True)]
    await store.begin_run("site", "f1", 100.0, entries, {"seen": 0})
    page = PageState("https://d/a", "https://d/a", '"e"', "", "h", ("https://d/c",))
    await store.record(
        "site",
        "https://d/a",
        page,
        previous=False,
        new_entries=[(2, Entry("https://d/c", True))],
        counts={"seen": 1},
    )

    again = await SqlCrawlStore.open(await open_database())
    row = await again.run_row("site")
    assert row is not None
    assert (row.running, row.fingerprint, row.started_at, row.counts) == (
        True,
        "f1",
        100.0,
        {"seen": 1},
    )
    assert await again.frontier("site") == (
        ["https://d/a"],
        [Entry("https://d/b", True), Entry("https://d/c", True)],
    )
    assert await again.pages("site") == {"https://d/a": page}

    await again.record("site", "https://d/b", None, previous=False, new_entries=[], counts={})
    await again.finish_run("site", 150.0, {"changed": 1})
    row = await again.run_row("site")
    assert row is not None and (row.running, row.finished_at, row.report) == (
        False,
        150.0,
        {"changed": 1},
    )
    assert await again.frontier("site") == ([], [])
    await again.forget_pages("site", ["https://d/a"])
    assert await again.pages("site") == {}
