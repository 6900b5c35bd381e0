"""Evaluation runs, with the config that produced them."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Protocol

from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

V1_SQLITE = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, created REAL NOT NULL, label TEXT NOT NULL,
    config TEXT NOT NULL, corpus TEXT NOT NULL, questions TEXT NOT NULL, totals TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    run_id INTEGER NOT NULL, position INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
);
"""

V1_POSTGRES = """
CREATE TABLE IF NOT EXISTS runs (
    id BIGSERIAL PRIMARY KEY, created DOUBLE PRECISION NOT NULL, label TEXT NOT NULL,
    config TEXT NOT NULL, corpus TEXT NOT NULL, questions TEXT NOT NULL, totals TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    run_id INTEGER NOT NULL, position INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
);
"""
UPGRADES = UpgradeTable("evaluations", [Upgrade("runs and their results", V1_SQLITE, V1_POSTGRES)])


@dataclass(frozen=True)
class Run:
    id: int
    created: float
    label: str
    config: str
    corpus: str
    questions: str
    totals: dict[str, float]


class RunStore(Protocol):
    async def add(
        self,
        *,
        label: str,
        config: str,
        corpus: str,
        questions: str,
        totals: dict[str, float],
        records: list[dict[str, Any]],
    ) -> int: ...
    async def runs(self) -> list[Run]: ...
    async def run(self, run_id: int) -> Run | None: ...
    async def records(self, run_id: int) -> list[dict[str, Any]]: ...


class SqlRunStore(SqlStore):
    upgrades = UPGRADES

    async def add(
        self,
        *,
        label: str,
        config: str,
        corpus: str,
        questions: str,
        totals: dict[str, float],
        records: list[dict[str, Any]],
    ) -> int:
        async with self.db.transaction() as tx:
            run_id = int(
                await tx.fetchval(
                    "INSERT INTO runs (created, label, config, corpus, questions, totals) "
                    "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                    time.time(),
                    label,
                    config,
                    corpus,
                    questions,
                    json.dumps(totals),
                )
            )
            await tx.executemany(
                "INSERT INTO results VALUES (?, ?, ?)",
                [(run_id, n, json.dumps(r)) for n, r in enumerate(records)],
            )
        return run_id

    async def runs(self) -> list[Run]:
        rows = await self.db.fetch(
            "SELECT id, created, label, config, corpus, questions, totals FROM runs ORDER BY id"
        )
        return [
            Run(int(id_), created, label, config, corpus, questions, json.loads(totals))
            for id_, created, label, config, corpus, questions, totals in rows
        ]

    async def run(self, run_id: int) -> Run | None:
        return next((run for run in await self.runs() if run.id == run_id), None)

    async def records(self, run_id: int) -> list[dict[str, Any]]:
        query = "SELECT record FROM results WHERE run_id = ? ORDER BY position"
        return [json.loads(row[0]) for row in await self.db.fetch(query, run_id)]
