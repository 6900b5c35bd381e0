"""The catalog on both backends: keyword search (FTS5 on SQLite, tsvector on PostgreSQL)
finds current chunks only, ranks titles first and honours every filter; the job queue
keeps order and failures."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from core.knowledge.documents import SearchFilters
from core.knowledge.ingest.jobs import SqlJobStore
from core.knowledge.search.catalog import ChunkRow, DocumentRecord, SqlCatalog
from core.knowledge.search.retrieval import build_hit


def record(doc_id: str, title: str, chunks: int, *, room: str = "", version: str = "1"):
    return DocumentRecord(
        "handbook",
        doc_id,
        "wiki",
        title,
        f"https://wiki/{doc_id}",
        "en",
        version,
        room,
        room == "",
        f"hash-{doc_id}-{version}",
        chunks,
        1.0,
    )


async def put(
    catalog: SqlCatalog,
    doc_id: str,
    title: str,
    texts: list[str],
    *,
    room: str = "",
    version: str = "1",
    dates: tuple[float, float] | None = None,
) -> None:
    rows = [ChunkRow(f"{doc_id}#{version}#{n}", n, title, t) for n, t in enumerate(texts)]
    document = record(doc_id, title, len(rows), room=room, version=version)
    await catalog.replace_document(document, rows, dates)


async def test_keyword_search_ranks_titles_first_and_sees_only_current_chunks(open_database):
    catalog = await SqlCatalog.open(await open_database())
    await put(catalog, "trains", "Train travel", ["Book trains two weeks ahead of travel."])
    await put(catalog, "misc", "Office notes", ["Some travel by train happens at times."])
    await put(catalog, "badges", "Office badges", ["Badges open the doors."])
    found = await catalog.keyword_search("train travel booking", SearchFilters(), 5)
    assert found[0] == "trains#1#0" and "misc#1#0" in found
    assert "badges#1#0" not in found, "a chunk must share two words with the question"

    await put(
        catalog, "trains", "Train travel", ["Trains are now booked one week ahead."], version="2"
    )
    found = await catalog.keyword_search("train travel", SearchFilters(), 5)
    assert "trains#1#0" not in found and "trains#2#0" in found, "the old version is gone"
    assert await catalog.delete_document("handbook", "trains")
    assert not await catalog.delete_document("handbook", "trains")
    assert "trains#2#0" not in await catalog.keyword_search("train travel", SearchFilters(), 5)
    assert await catalog.collection_sizes() == {"handbook": (2, 2)}


async def test_word_forms_are_found_on_both_backends(open_database, backend):
    catalog = await SqlCatalog.open(await open_database())
    await put(catalog, "trains", "Rail bookings", ["Tickets are booked by the travel desk."])
    found = await catalog.keyword_search("booking ticket", SearchFilters(), 5)
    # Both backends stem: PostgreSQL's English configuration, and FTS5's Porter tokenizer.
    assert found == ["trains#1#0"]
    assert await catalog.keyword_search("bookings tickets", SearchFilters(), 5) == ["trains#1#0"]


async def test_room_documents_only_for_their_room_and_from_its_cut_off(open_database):
    catalog = await SqlCatalog.open(await open_database())
    await put(
        catalog,
        "s1",
        "Summary of the ops room",
        ["The deploy moved to Friday."],
        room="!ops",
        dates=(100.0, 200.0),
    )
    await put(
        catalog,
        "s2",
        "Summary of the ops room",
        ["The deploy moved to Monday."],
        room="!ops",
        dates=(300.0, 400.0),
    )
    ids = ["s1#1#0", "s2#1#0"]
    assert await catalog.current_chunks(ids, SearchFilters()) == {}, "room knowledge is opt-in"
    assert set(await catalog.current_chunks(ids, SearchFilters(rooms=("!ops",)))) == set(ids)
    since = SearchFilters(rooms=("!ops",), rooms_since=(("!ops", 250.0),))
    assert set(await catalog.current_chunks(ids, since)) == {"s2#1#0"}
    between = SearchFilters(rooms=("!ops",), dated_between=(150.0, 250.0))
    assert set(await catalog.current_chunks(ids, between)) == {"s1#1#0"}
    found = await catalog.keyword_search("deploy moved", SearchFilters(rooms=("!ops",)), 5)
    assert set(found) == set(ids)
    row = (await catalog.current_chunks(["s1#1#0"], SearchFilters(rooms=("!ops",))))["s1#1#0"]
    assert (row[2], row[3], row[7], row[10]) == (
        "s1",
        "wiki",
        "The deploy moved to Friday.",
        "!ops",
    )


async def test_jobs_keep_their_order_and_a_failure_until_a_newer_job_ends(open_database):
    jobs = await SqlJobStore.open(await open_database())
    first = await jobs.add_job("handbook", "a", "put", {"id": "a", "content": "x"})
    second = await jobs.add_job("handbook", "a", "delete", None)
    assert [job.id for job in await jobs.queued_jobs(10)] == [first, second]
    assert await jobs.queue_depth() == 2
    await jobs.finish_job(first, "ValueError: unreadable")
    failed = await jobs.latest_job("handbook", "a")
    assert failed.id == second, "the newest job of the document is the one that counts"
    assert (await jobs.job(first)).error == "ValueError: unreadable"
    assert (await jobs.job(first)).payload is None, "a failed job drops its document"
    await jobs.finish_job(second)
    assert await jobs.job(first) is None and await jobs.job(second) is None
    assert await jobs.queue_depth() == 0


async def test_workers_claim_different_jobs_and_a_documents_jobs_in_order(open_database):
    one, two = [await SqlJobStore.open(await open_database()) for _ in range(2)]
    put_a = await one.add_job("handbook", "a", "put", {"id": "a"})
    delete_a = await one.add_job("handbook", "a", "delete", None)
    put_b = await one.add_job("handbook", "b", "put", {"id": "b"})
    put_c = await one.add_job("handbook", "c", "put", {"id": "c"})
    first = await one.claim_jobs("w1", 2, now=100.0, lease_seconds=60)
    assert [job.id for job in first] == [put_a, put_b], "a's delete waits for a's put"
    assert [job.id for job in await two.claim_jobs("w2", 10, 100.0, 60)] == [put_c]
    assert await two.claim_jobs("w2", 10, 101.0, 60) == [], "nothing twice"
    await one.finish_job(put_a)
    assert [job.id for job in await two.claim_jobs("w2", 10, 102.0, 60)] == [delete_a]


async def test_a_dead_workers_jobs_come_back_when_its_lease_ends_or_it_lets_go(open_database):
    jobs = await SqlJobStore.open(await open_database())
    job = await jobs.add_job("handbook", "a", "put", {"id": "a"})
    await jobs.claim_jobs("dead", 10, now=100.0, lease_seconds=60)
    assert await jobs.claim_jobs("alive", 10, now=150.0, lease_seconds=60) == []
    await jobs.renew_leases("dead", until=170.0)  # it was alive after all
    assert await jobs.claim_jobs("alive", 10, now=165.0, lease_seconds=60) == []
    assert [j.id for j in await jobs.claim_jobs("alive", 10, 171.0, 60)] == [job]
    await jobs.release_claims("alive")
    assert [j.id for j in await jobs.claim_jobs("next", 10, 172.0, 60)] == [job]


async def test_workers_claiming_at_the_same_moment_share_the_jobs_out(open_database):
    stores = [await SqlJobStore.open(await open_database()) for _ in range(4)]
    ids = [await stores[0].add_job("handbook", f"d{n}", "put", {"id": n}) for n in range(40)]
    claims = await asyncio.gather(
        *(store.claim_jobs(f"w{n}", 8, 100.0, 60) for n, store in enumerate(stores))
    )
    claimed = [job.id for claim in claims for job in claim]
    assert len(claimed) == len(set(claimed)) == 32 and set(claimed) <= set(ids)


async def test_a_rooms_summaries_are_found_by_a_link_a_moment_or_an_end(open_database):
    catalog = await SqlCatalog.open(await open_database())
    link = "[message](https://matrix.to/#/%21r/%24secret?via=x)"
    await put(catalog, "s1", "Summary 1", [f"Decision: x {link}"], room="!r", dates=(10.0, 20.0))
    await put(catalog, "s2", "Summary 2", ["Decision: y"], room="!r", dates=(20.5, 30.0))
    await put(catalog, "other", "Other room", [f"z {link}"], room="!o", dates=(10.0, 20.0))
    assert await catalog.documents_quoting("handbook", "!r", "%24secret") == ["s1"]
    assert await catalog.room_documents_covering("handbook", "!r", 25.0) == ["s2"]
    assert await catalog.room_documents_covering("handbook", "!r", 40.0) == []
    assert await catalog.room_documents_before("handbook", "!r", 25.0) == ["s1"]


async def test_a_documents_encryption_is_kept_and_unknown_for_earlier_ones(open_database):
    catalog = await SqlCatalog.open(await open_database())
    for doc_id, encrypted in (("sealed", True), ("plain", False), ("earlier", None)):
        document = replace(record(doc_id, "Summary", 1, room="!ops"), encrypted=encrypted)
        await catalog.replace_document(document, [ChunkRow(f"{doc_id}#0", 0, "", "The deploy.")])
        assert (await catalog.document("handbook", doc_id)).encrypted == encrypted
    rows = await catalog.current_chunks(
        ["sealed#0", "plain#0", "earlier#0"], SearchFilters(rooms=("!ops",))
    )
    hits = {chunk_id: build_hit(row, False).encrypted for chunk_id, row in rows.items()}
    assert hits == {"sealed#0": True, "plain#0": False, "earlier#0": None}


async def test_a_job_taken_over_is_finished_only_by_the_worker_that_holds_it(open_database):
    """A worker whose lease ran out (it stalled) may not finish the job another worker
    took over: that one's outcome counts."""
    jobs = await SqlJobStore.open(await open_database())
    job = await jobs.add_job("handbook", "a", "put", {"id": "a"})
    await jobs.claim_jobs("stalled", 10, now=100.0, lease_seconds=60)
    assert [j.id for j in await jobs.claim_jobs("fresh", 10, now=171.0, lease_seconds=60)] == [job]
    assert not await jobs.finish_job(job, "late failure", worker="stalled")
    assert (await jobs.job(job)).state == "queued", "still the fresh worker's"
    assert await jobs.finish_job(job, worker="fresh")
    assert await jobs.job(job) is None


async def test_a_tool_opening_the_catalog_leaves_the_running_workers_claims(open_database):
    """`knowledge-ingest --dry-run` opened the catalog while the bot indexed a long
    document: the worker's claim was voided, its outcome discarded ("taken over by
    another worker") and the document indexed twice. Claims of a process that died are
    voided when a worker starts (SQLite: one worker per file), not by every opener."""
    jobs = await SqlJobStore.open(await open_database())
    job = await jobs.add_job("handbook", "a", "put", {"id": "a"})
    await jobs.claim_jobs("bot", 10, now=100.0, lease_seconds=60)
    tool = await SqlJobStore.open(await open_database())
    assert await tool.claim_jobs("tool", 10, now=101.0, lease_seconds=60) == []
    assert await jobs.finish_job(job, worker="bot"), "the bot's outcome counts"
    assert await jobs.job(job) is None
    left = await jobs.add_job("handbook", "b", "put", {"id": "b"})
    await jobs.claim_jobs("died", 10, now=200.0, lease_seconds=60)
    restarted = await SqlJobStore.open(await open_database())
    await restarted.void_dead_claims()
    claimed = [j.id for j in await restarted.claim_jobs("new", 10, now=201.0, lease_seconds=60)]
    expected = [left] if restarted.db.dialect == "sqlite" else []
    assert claimed == expected, "SQLite: at once; PostgreSQL: when its lease ends"


async def test_an_application_counts_its_own_queued_jobs(open_database):
    """GET /api/v1/collections showed every application the whole queue's length."""
    jobs = await SqlJobStore.open(await open_database())
    await jobs.add_job("handbook", "a", "put", {"id": "a"})
    await jobs.add_job("handbook", "b", "put", {"id": "b"})
    await jobs.add_job("tickets", "t", "put", {"id": "t"})
    assert await jobs.queue_depth() == 3, "the metrics' count: all of them"
    assert await jobs.queue_depth(["tickets"]) == 1
    assert await jobs.queue_depth(["handbook", "tickets"]) == 3
    assert await jobs.queue_depth([]) == 0, "an application without collections"
