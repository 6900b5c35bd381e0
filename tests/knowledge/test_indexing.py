"""Putting, replacing and deleting documents; what readers then find. Both Chroma modes."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from core.knowledge.documents import Document, SearchFilters, parse_document_dates
from core.knowledge.search.catalog import SqlCatalog
from core.knowledge.search.vectors import ModelMismatch
from core.knowledge_base.base import KnowledgeBase
from core.storage.opening import Storage

TRAVEL = Document(
    "handbook",
    "policies/travel.md",
    "Travel policy",
    "# Travel policy\n\nBook trains two weeks ahead. Flights need the approval of your manager.\n\n"
    "## Expenses\n\nKeep all receipts for six months. Claims use form EXP-42.",
    url="https://wiki.example.org/travel",
)
LEAVE = Document(
    "handbook",
    "policies/leave.md",
    "Leave policy",
    "Everyone gets 25 days of paid vacation per year. Sick leave needs a doctor's note after 3 days.",
)


async def test_a_put_document_is_found_with_everything_needed_to_cite_it(kb):
    outcomes = await kb.indexer.put_many([TRAVEL, LEAVE])
    assert [o.status for o in outcomes] == ["indexed", "indexed"]

    hits = await kb.retriever.search("how many vacation days do I have?", k=1)
    assert hits[0].document_id == "policies/leave.md"
    hit = (await kb.retriever.search("which form for expense claims?", k=1))[0]
    assert (hit.document_id, hit.title, hit.url) == (TRAVEL.id, TRAVEL.title, TRAVEL.url)
    assert hit.heading == "Travel policy > Expenses" and "EXP-42" in hit.text
    assert hit.collection == "handbook" and hit.source == "wiki" and hit.public


async def test_a_document_that_repeats_itself_does_not_hide_the_others(kb):
    """A walk-through sent one paragraph 74,000 times over: 923 identical passages, and
    Chroma's index found nothing else for any question. A repeat is stored once."""
    filler = Document("handbook", "filler", "Filler", "Nothing to see here, only filler. " * 8000)
    outcomes = await kb.indexer.put_many([LEAVE, filler])
    assert outcomes[1].chunks <= 3, outcomes
    hits = await kb.retriever.search("how many vacation days do I have?", k=1)
    assert hits[0].document_id == "policies/leave.md", hits


async def test_an_unchanged_document_does_no_work_and_a_changed_one_replaces_all_chunks(kb):
    await kb.indexer.put_many([TRAVEL])
    assert [o.status for o in await kb.indexer.put_many([TRAVEL])] == ["unchanged"]

    changed = Document(
        TRAVEL.collection, TRAVEL.id, TRAVEL.title, "Travel is now booked by the HR desk only."
    )
    assert (await kb.indexer.put_many([changed]))[0].status == "indexed"
    hits = await kb.retriever.search("travel booking receipts form EXP-42", k=10)
    assert [h.text for h in hits] == ["Travel is now booked by the HR desk only."]
    assert kb.vectors.count("handbook", "all-MiniLM-L6-v2") == 1


async def test_documents_changed_together_keep_only_their_new_chunks(kb):
    """A run of documents is written to Chroma in one request and their old versions
    removed in one: each keeps its new chunks, none keeps an old one."""
    await kb.indexer.put_many([TRAVEL, LEAVE, replace(LEAVE, id="policies/sick.md")])
    changed = [replace(d, content=f"{d.title} changed: ask the HR desk.") for d in (TRAVEL, LEAVE)]
    outcomes = await kb.indexer.put_many(changed)
    assert [o.status for o in outcomes] == ["indexed", "indexed"]
    assert kb.vectors.count("handbook", "all-MiniLM-L6-v2") == 2 + 1  # and sick.md's own
    hits = await kb.retriever.search("changed: ask the HR desk", k=10)
    texts = {h.document_id: h.text for h in hits}
    assert texts[TRAVEL.id] == "Travel policy changed: ask the HR desk."
    assert texts[LEAVE.id] == "Leave policy changed: ask the HR desk."


async def test_a_deleted_document_is_never_found_again(kb):
    await kb.indexer.put_many([TRAVEL, LEAVE])
    assert (await kb.indexer.delete("handbook", LEAVE.id)).status == "deleted"
    assert (await kb.indexer.delete("handbook", LEAVE.id)).status == "absent"
    hits = await kb.retriever.search("vacation days sick leave", k=10)
    assert LEAVE.id not in {h.document_id for h in hits}
    assert await kb.catalog.collection_sizes() == {"handbook": (1, 2)}


async def test_a_version_written_to_chroma_but_not_swapped_in_is_invisible(kb):
    """A crash between writing new chunks and the catalog swap shows the old version only."""
    await kb.indexer.put_many([TRAVEL])
    newer = Document(
        TRAVEL.collection, TRAVEL.id, TRAVEL.title, "Half-written new version about trains."
    )
    prepared = kb.indexer._prepare(newer)
    vectors = await prepared.embedder.embed_passages(
        [c.embedding_text(newer.title) for c in prepared.chunks]
    )
    ids = [f"handbook/{newer.id}#crashed#{c.position}" for c in prepared.chunks]
    metadata = {
        "doc_id": newer.id,
        "room": "",
        "source": "wiki",
        "content_hash": "crashed",
        "updated_at": 0.0,
    }
    kb.vectors.upsert("handbook", "all-MiniLM-L6-v2", ids, vectors, [metadata] * len(ids))

    hits = await kb.retriever.search("half-written new version about trains", k=10)
    assert hits and all("Half-written" not in h.text for h in hits)
    assert await kb.indexer.decide(newer) == "changed"
    await kb.indexer.put_many([newer])
    assert "Half-written" in (await kb.retriever.search("new version about trains", k=1))[0].text


async def test_filters_on_collection_source_public_and_rooms(kb):
    ticket = Document(
        "tickets",
        "T-1",
        "VPN outage",
        "The VPN gateway failed on Monday; vacation requests were delayed.",
    )
    summary = Document(
        "handbook",
        "summary-1",
        "Room summary",
        "We decided vacation requests go through Anna.",
        room="!roomA",
    )
    await kb.indexer.put_many([LEAVE, ticket, summary])

    def ids(hits):
        return {h.document_id for h in hits}

    everything = await kb.retriever.search("vacation requests", k=10)
    assert ids(everything) == {LEAVE.id, "T-1"}, "room documents need their room listed"
    assert ids(await kb.retriever.search("vacation", SearchFilters(public_only=True), k=10)) == {
        LEAVE.id
    }
    assert ids(
        await kb.retriever.search("vacation", SearchFilters(sources=("tracker",)), k=10)
    ) == {"T-1"}
    assert ids(
        await kb.retriever.search("vacation", SearchFilters(collections=("tickets",)), k=10)
    ) == {"T-1"}
    in_room = await kb.retriever.search("vacation", SearchFilters(rooms=("!roomA",)), k=10)
    assert "summary-1" in ids(in_room)
    future = SearchFilters(updated_after=4_000_000_000)
    assert await kb.retriever.search("vacation", future, k=10) == []


async def test_a_time_range_keeps_dated_documents_that_meet_it_and_all_undated_ones(kb):
    notes = [
        Document(
            "handbook",
            "nov",
            "Ops meeting 3 Nov",
            "Decision: the VPN moves to vpn2.",
            date="2026-11-03",
        ),
        Document(
            "handbook",
            "oct",
            "Ops meeting October",
            "Decision: the VPN stays on vpn1.",
            date="2026-10-01",
            date_end="2026-10-31",
        ),
        Document("handbook", "policy", "VPN policy", "The VPN is required off-site."),
    ]
    await kb.indexer.put_many(notes)
    november = SearchFilters(dated_between=parse_document_dates("2026-11-01", "2026-11-30"))
    found = {h.document_id for h in await kb.retriever.search("VPN decision", november, k=10)}
    assert found == {"nov", "policy"}
    later = SearchFilters(dated_between=parse_document_dates("2026-10-31T12:00:00+00:00"))
    found = {h.document_id for h in await kb.retriever.search("VPN decision", later, k=10)}
    assert found == {"oct", "policy"}, "the October period ends at the end of the 31st"
    await kb.indexer.put_many([replace(notes[0], date="")])
    found = {h.document_id for h in await kb.retriever.search("VPN decision", november, k=10)}
    assert "nov" in found and "oct" not in found


async def test_overfetch_returns_more_than_k(kb):
    many = [
        Document("handbook", f"d{i}", f"Note {i}", f"Parking rule number {i}: park in zone {i}.")
        for i in range(12)
    ]
    await kb.indexer.put_many(many)
    assert len(await kb.retriever.search("parking rules", k=3)) == 3
    assert len(await kb.retriever.search("parking rules", k=3, overfetch=3)) == 9


async def test_a_collection_refuses_a_second_embedding_model(kb, tmp_path):
    await kb.indexer.put_many([LEAVE])
    with pytest.raises(ModelMismatch, match="embedded again at the next start"):
        kb.vectors.upsert(
            "handbook", "/models/another-model", ["x"], [[0.0] * 384], [{"doc_id": "x"}]
        )


async def test_the_catalog_survives_a_reopen(kb):
    await kb.indexer.put_many([LEAVE])
    settings = kb.indexer.settings()
    storage = Storage(settings.storage, settings.bot.data_dir)
    reopened = await SqlCatalog.open(await storage.database("catalog"))
    assert (await reopened.document("handbook", LEAVE.id)).chunk_count == 1
    await storage.close()


async def test_the_queue_indexes_in_the_background_and_keeps_order(kb):
    worker = asyncio.create_task(kb.queue.run())
    try:
        put = await kb.queue.submit_put(LEAVE)
        delete = await kb.queue.submit_delete("handbook", LEAVE.id)
        again = await kb.queue.submit_put(TRAVEL)
        # Order holds per document (a put, then its delete); another document's job may
        # finish first.
        assert (await kb.queue.wait(again)).status == "indexed"
        deleted = await kb.queue.wait(delete)  # None: it was done before the wait began
        assert deleted is None or deleted.status == "deleted"
        assert await kb.catalog.document("handbook", LEAVE.id) is None
        assert await kb.jobs.job(put) is None and await kb.jobs.job(delete) is None
        assert await kb.jobs.queue_depth() == 0
    finally:
        worker.cancel()


@pytest.mark.parametrize("kb", ["embedded"], indirect=True)
async def test_queued_jobs_survive_a_restart(kb, tmp_path, embedders):
    job = await kb.queue.submit_put(LEAVE)
    settings = kb.indexer.settings()
    await kb.close()  # the process stops before the worker ran

    restarted = await KnowledgeBase.open(lambda: settings, embedders)
    worker = asyncio.create_task(restarted.queue.run())
    try:
        # The worker indexes the document, then drops the job: wait for both.
        for _ in range(400):
            indexed = await restarted.catalog.document("handbook", LEAVE.id)
            if indexed and not await restarted.jobs.job(job):
                break
            await asyncio.sleep(0.05)
        assert (await restarted.catalog.document("handbook", LEAVE.id)).chunk_count == 1
        assert await restarted.jobs.job(job) is None
    finally:
        worker.cancel()
        await restarted.close()


@pytest.mark.parametrize("kb", ["embedded"], indirect=True)
async def test_a_job_one_process_queues_is_indexed_by_anothers_worker(kb, embedders):
    """Two processes on one storage (here two knowledge bases in one test): the API of
    the first queues, only the second runs a worker, and the first's wait still ends."""
    other = await KnowledgeBase.open(kb.indexer.settings, embedders)
    worker = asyncio.create_task(other.queue.run())
    try:
        job = await kb.queue.submit_put(LEAVE)
        async with asyncio.timeout(60):
            await kb.queue.wait(job)
        assert (await kb.catalog.document("handbook", LEAVE.id)).chunk_count == 1
        assert await kb.jobs.job(job) is None and await kb.jobs.queue_depth() == 0
    finally:
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
        await other.close()
