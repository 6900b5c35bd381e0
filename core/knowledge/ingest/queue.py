"""The ingestion queue: jobs are stored first, then indexed by the workers of every
process that shares the storage (each claims jobs with a lease, see core/knowledge/ingest/jobs.py).

Stored jobs survive a crash or restart and are picked up again. A worker takes runs of
consecutive puts together, so that their chunks are embedded in shared batches and
written to Chroma in one request; the embedding itself runs in a thread, so a slow
model never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import asdict

from core import strings
from core.knowledge.documents import Document
from core.knowledge.ingest.indexer import Indexer, Outcome, UnknownCollection
from core.knowledge.ingest.jobs import Job, JobStore
from core.knowledge.search.embedding import EmbeddingModelError
from core.knowledge.search.vectors import KnowledgeUnavailable, ModelMismatch
from core.storage.database import StorageError

log = logging.getLogger(__name__)

MAX_DOCUMENTS_PER_RUN = 32
OUTAGE_RETRY_SECONDS = (1, 2, 5, 10, 30)
# A claimed job is the worker's for this long, renewed while it works; a worker that
# died loses its jobs this long after its last renewal.
LEASE_SECONDS = 60.0
# How often an idle worker looks for jobs other processes queued (its own wake it at once).
IDLE_POLL_SECONDS = 2.0
WAIT_POLL_SECONDS = 0.5


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


# Errors whose text is written for whoever runs the source application.
EXPLAINED = (UnknownCollection, EmbeddingModelError, ModelMismatch)


def _describe_failure(job: Job, exc: Exception) -> str:
    """What the job's status says: an explained error's own sentence; for anything else
    a reference to the log line, never the internals (they are the bot's admin's)."""
    if isinstance(exc, EXPLAINED):
        log.warning("ingestion job %s failed: %s", job.id, exc)
        return str(exc)
    reference = uuid.uuid4().hex[:8]
    log.exception("ingestion job %s failed (reference %s)", job.id, reference)
    return strings.INGEST_JOB_FAILED.format(reference=reference)


class IngestQueue:
    def __init__(self, jobs: JobStore, indexer: Indexer) -> None:
        self.jobs = jobs
        self.indexer = indexer
        self._wakeup = asyncio.Event()
        self._finished: dict[int, asyncio.Future[Outcome | None]] = {}
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    async def submit_put(self, document: Document) -> int:
        job_id = await self.jobs.add_job(document.collection, document.id, "put", asdict(document))
        self._wakeup.set()
        return job_id

    async def submit_delete(self, collection: str, doc_id: str) -> int:
        job_id = await self.jobs.add_job(collection, doc_id, "delete", None)
        self._wakeup.set()
        return job_id

    async def wait(self, job_id: int) -> Outcome | None:
        """The job's outcome once done; None if it failed, ended before the wait began, or
        was done by another process's worker (the store then says how it went)."""
        future = self._finished.setdefault(job_id, asyncio.get_running_loop().create_future())
        try:
            while True:
                job = await self.jobs.job(job_id)
                if job is None or job.state != "queued":
                    return future.result() if future.done() else None
                try:
                    async with asyncio.timeout(WAIT_POLL_SECONDS):
                        return await asyncio.shield(future)
                except TimeoutError:
                    continue
        finally:
            self._finished.pop(job_id, None)

    async def run(self) -> None:
        """Work through stored jobs until cancelled. While Chroma is unreachable the jobs
        stay queued and are tried again, less and less often."""
        outages = 0
        try:
            await self.jobs.void_dead_claims()
        except StorageError as exc:  # they come back when their leases end
            log.warning("claims of an earlier run kept until their leases end: %s", exc)
        while True:
            self._wakeup.clear()
            jobs = await self.jobs.claim_jobs(
                self.worker, MAX_DOCUMENTS_PER_RUN, time.time(), LEASE_SECONDS
            )
            if not jobs:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(IDLE_POLL_SECONDS):
                        await self._wakeup.wait()
                continue
            try:
                async with self._holding():
                    for run in _runs(jobs):
                        await self._process(run)
                outages = 0
            except (KnowledgeUnavailable, StorageError) as exc:
                delay = OUTAGE_RETRY_SECONDS[min(outages, len(OUTAGE_RETRY_SECONDS) - 1)]
                outages += 1
                what = "the knowledge" if isinstance(exc, KnowledgeUnavailable) else "the database"
                log.warning("ingestion waits for %s (%s); trying again in %s s", what, exc, delay)
                await asyncio.sleep(delay)

    @contextlib.asynccontextmanager
    async def _holding(self) -> AsyncIterator[None]:
        """Keep the claimed jobs' leases while working on them; give back, at the end,
        those not finished (an outage, a shutdown) so that any worker takes them at once."""

        async def renew() -> None:
            while True:
                await asyncio.sleep(LEASE_SECONDS / 3)
                try:
                    await self.jobs.renew_leases(self.worker, time.time() + LEASE_SECONDS)
                except StorageError as exc:
                    # Tried again at the next turn; a lease that runs out meanwhile lets
                    # another worker take the jobs, and then its outcome counts.
                    log.warning("the ingestion jobs' leases were not renewed: %s", exc)

        renewing = asyncio.create_task(renew())
        try:
            yield
        finally:
            renewing.cancel()
            try:
                await asyncio.shield(self.jobs.release_claims(self.worker))
            except StorageError as exc:
                log.warning("claims kept until their leases end: %s", exc)

    async def _process(self, run: list[Job]) -> None:
        try:
            if run[0].op == "delete":
                outcomes = [await self.indexer.delete(run[0].collection, run[0].doc_id)]
            else:
                outcomes = await self.indexer.put_many([Document(**j.payload or {}) for j in run])
        except (KnowledgeUnavailable, StorageError):
            raise  # not the document's fault: it stays queued
        except Exception as exc:  # a bad document must not stop the queue
            if len(run) > 1:
                for job in run:
                    await self._process([job])
                return
            await self._finish(run[0], None, _describe_failure(run[0], exc))
            return
        for job, outcome in zip(run, outcomes, strict=True):
            await self._finish(job, outcome, None)

    async def _finish(self, job: Job, outcome: Outcome | None, error: str | None) -> None:
        if not await self.jobs.finish_job(job.id, error, worker=self.worker):
            log.info("job %d was taken over by another worker; its outcome counts", job.id)
            return
        status = outcome.status if outcome else "failed"
        log.info("job %d (%s %s/%s): %s", job.id, job.op, job.collection, job.doc_id, status)
        future = self._finished.get(job.id)
        if future and not future.done():
            future.set_result(outcome)
