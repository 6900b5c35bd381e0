"""The ingestion queue: documents to put or delete, kept until indexed.

A done job is removed; a failed one is kept, with its error, for the status API. Workers
(in one process or several sharing the storage) claim jobs with a lease: a job is one
worker's while its lease runs, and a worker that dies loses it when the lease ends. Only
the oldest queued job of a document can be claimed, so a document's puts and deletes
apply in the order they came, whichever workers take them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from core.storage.database import Row
from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

UPGRADES = UpgradeTable(
    "jobs",
    [
        Upgrade(
            "the job queue",
            """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, collection TEXT NOT NULL, doc_id TEXT NOT NULL,
    op TEXT NOT NULL, payload TEXT, state TEXT NOT NULL DEFAULT 'queued', error TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, id);
CREATE INDEX IF NOT EXISTS jobs_by_document ON jobs (collection, doc_id, id);
""",
            """
CREATE TABLE IF NOT EXISTS jobs (
    id BIGSERIAL PRIMARY KEY, collection TEXT NOT NULL, doc_id TEXT NOT NULL,
    op TEXT NOT NULL, payload TEXT, state TEXT NOT NULL DEFAULT 'queued', error TEXT,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, id);
CREATE INDEX IF NOT EXISTS jobs_by_document ON jobs (collection, doc_id, id);
""",
        ),
        Upgrade(
            "jobs claimed by a worker, with a lease",
            "ALTER TABLE jobs ADD COLUMN claimed_by TEXT;"
            " ALTER TABLE jobs ADD COLUMN lease_until REAL",
            "ALTER TABLE jobs ADD COLUMN claimed_by TEXT;"
            " ALTER TABLE jobs ADD COLUMN lease_until DOUBLE PRECISION",
        ),
    ],
)
COLUMNS = "id, collection, doc_id, op, payload, state, error"


@dataclass(frozen=True)
class Job:
    id: int
    collection: str
    doc_id: str
    op: str
    payload: dict[str, Any] | None
    state: str
    error: str | None


def _job(row: Row) -> Job:
    id_, collection, doc_id, op, payload, state, error = row
    return Job(
        int(id_), collection, doc_id, op, json.loads(payload) if payload else None, state, error
    )


class JobStore(Protocol):
    async def add_job(self, collection: str, doc_id: str, op: str, payload: dict | None) -> int: ...
    async def queued_jobs(self, limit: int) -> list[Job]: ...
    async def claim_jobs(
        self, worker: str, limit: int, now: float, lease_seconds: float
    ) -> list[Job]: ...
    async def renew_leases(self, worker: str, until: float) -> None: ...
    async def void_dead_claims(self) -> None: ...
    async def release_claims(self, worker: str) -> None: ...
    async def finish_job(
        self, job_id: int, error: str | None = None, worker: str | None = None
    ) -> bool: ...
    async def job(self, job_id: int) -> Job | None: ...
    async def latest_job(self, collection: str, doc_id: str) -> Job | None: ...
    async def queue_depth(self, collections: Sequence[str] | None = None) -> int: ...


class SqlJobStore(SqlStore):
    upgrades = UPGRADES

    async def void_dead_claims(self) -> None:
        """A worker starts: on SQLite (one worker per file), claims left by a process
        that died are void, and its jobs need not wait for their leases to end. Only the
        worker does this: a tool that opens the catalog meanwhile (`knowledge-ingest
        --dry-run`) voided the running worker's claims, which then indexed a job twice."""
        if self.db.dialect == "sqlite":
            await self.db.execute(
                "UPDATE jobs SET claimed_by = NULL, lease_until = NULL"
                " WHERE claimed_by IS NOT NULL AND state = 'queued'"
            )

    async def add_job(self, collection: str, doc_id: str, op: str, payload: dict | None) -> int:
        return int(
            await self.db.fetchval(
                "INSERT INTO jobs (collection, doc_id, op, payload, created_at)"
                " VALUES (?, ?, ?, ?, ?) RETURNING id",
                collection,
                doc_id,
                op,
                json.dumps(payload) if payload else None,
                time.time(),
            )
        )

    async def queued_jobs(self, limit: int) -> list[Job]:
        rows = await self.db.fetch(
            f"SELECT {COLUMNS} FROM jobs WHERE state = 'queued' ORDER BY id LIMIT ?", limit
        )
        return [_job(row) for row in rows]

    async def claim_jobs(
        self, worker: str, limit: int, now: float, lease_seconds: float
    ) -> list[Job]:
        """Queued jobs no one holds, oldest first, now `worker`'s until its lease ends.
        On PostgreSQL, workers claiming at once skip each other's rows (`SKIP LOCKED`);
        SQLite runs one claim at a time."""
        lock = " FOR UPDATE SKIP LOCKED" if self.db.dialect == "postgres" else ""
        async with self.db.transaction() as tx:
            rows = await tx.fetch(
                f"UPDATE jobs SET claimed_by = ?, lease_until = ? WHERE id IN ("
                " SELECT j.id FROM jobs j WHERE j.state = 'queued'"
                " AND (j.lease_until IS NULL OR j.lease_until < ?)"
                " AND NOT EXISTS (SELECT 1 FROM jobs e WHERE e.collection = j.collection"
                " AND e.doc_id = j.doc_id AND e.state = 'queued' AND e.id < j.id)"
                f" ORDER BY j.id LIMIT ?{lock}) RETURNING {COLUMNS}",
                worker,
                now + lease_seconds,
                now,
                limit,
            )
        return sorted((_job(row) for row in rows), key=lambda job: job.id)

    async def renew_leases(self, worker: str, until: float) -> None:
        """The worker is alive and still working on what it holds."""
        await self.db.execute(
            "UPDATE jobs SET lease_until = ? WHERE claimed_by = ? AND state = 'queued'",
            until,
            worker,
        )

    async def release_claims(self, worker: str) -> None:
        """The worker stops: what it held is anyone's again, at once."""
        await self.db.execute(
            "UPDATE jobs SET claimed_by = NULL, lease_until = NULL"
            " WHERE claimed_by = ? AND state = 'queued'",
            worker,
        )

    async def finish_job(
        self, job_id: int, error: str | None = None, worker: str | None = None
    ) -> bool:
        """End the job, done or failed with `error`. With `worker`, only while that
        worker holds it: False when its lease ran out and another worker took it over."""
        lock = " FOR UPDATE" if self.db.dialect == "postgres" else ""
        async with self.db.transaction() as tx:
            job = await tx.fetchrow(
                f"SELECT collection, doc_id, claimed_by FROM jobs WHERE id = ?{lock}", job_id
            )
            if job and worker is not None and job[2] != worker:
                return False
            if job:
                # Older failures of the same document are history once a newer job ends.
                await tx.execute(
                    "DELETE FROM jobs WHERE collection = ? AND doc_id = ? AND id < ?"
                    " AND state = 'failed'",
                    job[0],
                    job[1],
                    job_id,
                )
            if error is None:
                await tx.execute("DELETE FROM jobs WHERE id = ?", job_id)
            else:
                await tx.execute(
                    "UPDATE jobs SET state = 'failed', error = ?, payload = NULL WHERE id = ?",
                    error,
                    job_id,
                )
        return True

    async def job(self, job_id: int) -> Job | None:
        row = await self.db.fetchrow(f"SELECT {COLUMNS} FROM jobs WHERE id = ?", job_id)
        return _job(row) if row else None

    async def latest_job(self, collection: str, doc_id: str) -> Job | None:
        row = await self.db.fetchrow(
            f"SELECT {COLUMNS} FROM jobs WHERE collection = ? AND doc_id = ?"
            " ORDER BY id DESC LIMIT 1",
            collection,
            doc_id,
        )
        return _job(row) if row else None

    async def queue_depth(self, collections: Sequence[str] | None = None) -> int:
        """Jobs waiting: all of them, or those of `collections` (an application's own)."""
        args: tuple[str, ...] = ()
        if collections is None:
            sql = "SELECT COUNT(*) FROM jobs WHERE state = 'queued'"
        elif not collections:
            return 0
        else:
            marks = ", ".join("?" * len(collections))
            sql = f"SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND collection IN ({marks})"
            args = tuple(collections)
        return int(await self.db.fetchval(sql, *args))
