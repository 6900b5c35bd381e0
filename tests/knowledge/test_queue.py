"""The ingestion queue's worker, as a source application sees its jobs end."""

from __future__ import annotations

import asyncio

from core.knowledge.base import KnowledgeBase
from core.knowledge.documents import Document
from tests.knowledge.conftest import knowledge_settings


async def test_a_failed_job_says_why_in_words_for_the_application(tmp_path, embedders):
    """A document queued for a collection the admin removed before it was indexed: the
    job fails with a sentence, not the name of an exception inside the bot."""
    settings = [knowledge_settings(tmp_path)]
    kb = await KnowledgeBase.open(lambda: settings[0], embedders)
    try:
        job = await kb.queue.submit_put(Document(collection="handbook", id="a", title="A",
                                                 content="Trains are booked ahead."))  # fmt: skip
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
