"""Evaluation runs, with the config that produced them, in SQLite."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.sqlite_store import SqliteStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, created REAL NOT NULL, label TEXT NOT NULL,
    config TEXT NOT NULL, corpus TEXT NOT NULL, questions TEXT NOT NULL, totals TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    run_id INTEGER NOT NULL, position INTEGER NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
);
"""


@dataclass(frozen=True)
class Run:
    id: int
    created: float
    label: str
    config: str
    corpus: str
    questions: str
    totals: dict[str, float]


class RunStore(SqliteStore):
    def __init__(self, path: Path) -> None:
        super().__init__(path, SCHEMA)

    def add(
        self,
        *,
        label: str,
        config: str,
        corpus: str,
        questions: str,
        totals: dict[str, float],
        records: list[dict[str, Any]],
    ) -> int:
        with self._lock, self._db:
            cursor = self._db.execute(
                "INSERT INTO runs (created, label, config, corpus, questions, totals) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (time.time(), label, config, corpus, questions, json.dumps(totals)),
            )
            run_id = int(cursor.lastrowid or 0)
            self._db.executemany(
                "INSERT INTO results VALUES (?, ?, ?)",
                [(run_id, n, json.dumps(r)) for n, r in enumerate(records)],
            )
        return run_id

    def runs(self) -> list[Run]:
        rows = self._run("SELECT * FROM runs ORDER BY id")
        return [Run(*row[:6], json.loads(row[6])) for row in rows]

    def run(self, run_id: int) -> Run | None:
        return next((run for run in self.runs() if run.id == run_id), None)

    def records(self, run_id: int) -> list[dict[str, Any]]:
        rows = self._run("SELECT record FROM results WHERE run_id = ? ORDER BY position", (run_id,))
        return [json.loads(row[0]) for row in rows]
