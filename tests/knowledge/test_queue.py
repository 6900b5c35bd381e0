"""The ingestion queue's worker, as a source application sees its jobs end."""

from __future__ import annotations

import asyncio
import threading

from core.knowledge.documents import Document
from core.knowledge_base.base import KnowledgeBase
from tests.knowledge.conftest import knowledge_settings


async def test_a_failed_job_says_why_in_words_for_the_application(tmp_path, embedders):
    """A document queued for a collection the admin removed before it was indexed: the
    job fails with a sentence, not the name of an exception inside the bot."""
    settings = [knowledge_settings(tmp_path)]
    kb = await KnowledgeBase.open(lambda: settings[0], embedders)
    try:
        job = await kb.queue.submit_put(
            Document(collection="handbook", id="a", title="A", content="Trains are booked ahead.")
        )
        settings[0] = settings[0].model_copy(update={"collections": {}})
        worker = asyncio.create_task(kb.queue.run())
        async with asyncio.timeout(30):
            # A row in the store, which has no event to wait on.
            while (found := await kb.jobs.job(job)) and found.state == "queued":  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        worker.cancel()
        assert found is not None and found.state == "failed"
        assert found.error == "there is no collection 'handbook' in the config"
    finally:
        await kb.close()


async def test_closing_the_knowledge_base_ends_its_embedding_thread(tmp_path):
    """A knowledge base with models of its own leaves no thread behind when it closes
    (a process that stops, or a test that opens many, would collect them)."""
    settings = knowledge_settings(tmp_path)
    before = set(threading.enumerate())  # other tests' models keep theirs
    kb = await KnowledgeBase.open(lambda: settings)
    await kb.embedders.get(settings.knowledge.embedding_model).embed_queries(["warm-up"])
    threads = [t for t in set(threading.enumerate()) - before if t.name.startswith("embed")]
    assert threads, "the model encodes on a thread of its own"
    await kb.close()
    for thread in threads:
        thread.join(timeout=10)
    assert not any(thread.is_alive() for thread in threads)
