"""The ingestion queue: jobs are stored first, then indexed by one worker.

Stored jobs survive a crash or restart and are picked up again. The worker takes runs of
consecutive puts together, so that their chunks are embedded in shared batches; the
embedding itself runs in a thread, so a slow model never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import asdict

from core.knowledge.documents import Document
from core.knowledge.indexer import Indexer, Outcome
from core.knowledge.jobs import Job, JobStore
from core.knowledge.vectors import KnowledgeUnavailable

log = logging.getLogger(__name__)

MAX_DOCUMENTS_PER_RUN = 32
OUTAGE_RETRY_SECONDS = (1, 2, 5, 10, 30)


def _runs(jobs: list[Job]) -> list[list[Job]]:
    """Consecutive puts of distinct documents go together; anything else runs alone."""
    runs: list[list[Job]] = []
    for job in jobs:
        last = runs[-1] if runs else None
        if (
            last
            and job.op == "put"
            and last[0].op == "put"
            and (job.collection, job.doc_id) not in {(j.collection, j.doc_id) for j in last}
        ):
            last.append(job)
        else:
            runs.append([job])
    return runs


class IngestQueue:
    def __init__(self, jobs: JobStore, indexer: Indexer) -> None:
        self.jobs = jobs
        self.indexer = indexer
        self._wakeup = asyncio.Event()
        self._finished: dict[int, asyncio.Future[Outcome | None]] = {}

    async def submit_put(self, document: Document) -> int:
        job_id = await self.jobs.add_job(document.collection, document.id, "put", asdict(document))
        self._wakeup.set()
        return job_id

    async def submit_delete(self, collection: str, doc_id: str) -> int:
        job_id = await self.jobs.add_job(collection, doc_id, "delete", None)
        self._wakeup.set()
        return job_id

    async def wait(self, job_id: int) -> Outcome | None:
        """The job's outcome once done; None if it failed or ended before the wait began."""
        future = self._finished.setdefault(job_id, asyncio.get_running_loop().create_future())
        try:
            if await self.jobs.job(job_id) is None and not future.done():
                return None
            return await asyncio.shield(future)
        finally:
            self._finished.pop(job_id, None)

    async def run(self) -> None:
        """Work through stored jobs until cancelled. While Chroma is unreachable the jobs
        stay queued and are tried again, less and less often."""
        outages = 0
        while True:
            self._wakeup.clear()
            jobs = await self.jobs.queued_jobs(MAX_DOCUMENTS_PER_RUN)
            if not jobs:
                await self._wakeup.wait()
                continue
            try:
                for run in _runs(jobs):
                    await self._process(run)
                outages = 0
            except KnowledgeUnavailable as exc:
                delay = OUTAGE_RETRY_SECONDS[min(outages, len(OUTAGE_RETRY_SECONDS) - 1)]
                outages += 1
                log.warning("ingestion waits for Chroma (%s); trying again in %s s", exc, delay)
                await asyncio.sleep(delay)

    async def _process(self, run: list[Job]) -> None:
        try:
            if run[0].op == "delete":
                outcomes = [await self.indexer.delete(run[0].collection, run[0].doc_id)]
            else:
                outcomes = await self.indexer.put_many([Document(**j.payload or {}) for j in run])
        except KnowledgeUnavailable:
            raise  # not the document's fault: it stays queued
        except Exception as exc:  # a bad document must not stop the queue
            if len(run) > 1:
                for job in run:
                    await self._process([job])
                return
            log.exception("ingestion job %s failed", run[0].id)
            await self._finish(run[0], None, f"{type(exc).__name__}: {exc}")
            return
        for job, outcome in zip(run, outcomes, strict=True):
            await self._finish(job, outcome, None)

    async def _finish(self, job: Job, outcome: Outcome | None, error: str | None) -> None:
        await self.jobs.finish_job(job.id, error)
        future = self._finished.get(job.id)
        if future and not future.done():
            future.set_result(outcome)
