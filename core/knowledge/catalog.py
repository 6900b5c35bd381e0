"""The catalog: which version of each document is current, its chunks' text, and the job queue.

SQLite in the data folder. It is the source of truth for what readers see: a document's
chunks are swapped in one transaction, and Chroma only proposes candidate chunk ids, so
chunks of a replaced or half-written version are never returned. The chunks' text is
indexed with FTS5, whose `bm25()` ranks the keyword side of hybrid search.
"""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spacy.lang.en.stop_words import STOP_WORDS

from core.knowledge.documents import SearchFilters

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    collection TEXT NOT NULL, doc_id TEXT NOT NULL, source TEXT NOT NULL,
    title TEXT NOT NULL, url TEXT NOT NULL, language TEXT NOT NULL, version TEXT NOT NULL,
    room TEXT NOT NULL, public INTEGER NOT NULL, content_hash TEXT NOT NULL,
    chunk_count INTEGER NOT NULL, updated_at REAL NOT NULL,
    PRIMARY KEY (collection, doc_id)
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE,
    collection TEXT NOT NULL, doc_id TEXT NOT NULL, position INTEGER NOT NULL,
    title TEXT NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_of_document ON chunks (collection, doc_id);
CREATE TABLE IF NOT EXISTS document_dates (
    collection TEXT NOT NULL, doc_id TEXT NOT NULL, date_from REAL NOT NULL,
    date_to REAL NOT NULL, PRIMARY KEY (collection, doc_id)
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_fts USING fts5(
    title, heading, text, content='chunks', content_rowid='rowid',
    tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_vocab USING fts5vocab(chunk_fts, 'row');
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunk_fts (rowid, title, heading, text)
    VALUES (new.rowid, new.title, new.heading, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunk_fts (chunk_fts, rowid, title, heading, text)
    VALUES ('delete', old.rowid, old.title, old.heading, old.text);
END;
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, collection TEXT NOT NULL, doc_id TEXT NOT NULL,
    op TEXT NOT NULL, payload TEXT, state TEXT NOT NULL DEFAULT 'queued', error TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, id);
CREATE INDEX IF NOT EXISTS jobs_by_document ON jobs (collection, doc_id, id);
"""

MAX_QUERY_WORDS = 12
COMMON_WORD_SHARE = 0.1
COMMON_WORD_MIN_CHUNKS = 50
HIT_COLUMNS = (
    "c.chunk_id, c.collection, c.doc_id, d.source, c.title, d.url, c.heading, c.text,"
    " c.position, d.public, d.room"
)


@dataclass(frozen=True)
class DocumentRecord:
    collection: str
    doc_id: str
    source: str
    title: str
    url: str
    language: str
    version: str
    room: str
    public: bool
    content_hash: str
    chunk_count: int
    updated_at: float


@dataclass(frozen=True)
class ChunkRow:
    chunk_id: str
    position: int
    heading: str
    text: str


@dataclass(frozen=True)
class Job:
    id: int
    collection: str
    doc_id: str
    op: str
    payload: dict[str, Any] | None
    state: str
    error: str | None


def parse_query_words(text: str) -> list[str]:
    """The question's words as FTS5 indexes them (lower case, no accents), without stop words."""
    plain = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(char for char in plain if not unicodedata.combining(char))
    return [w for w in dict.fromkeys(re.findall(r"\w+", plain)) if w not in STOP_WORDS]


def decide_selective_words(words: list[str], frequency: dict[str, int], chunks: int) -> list[str]:
    """The words worth searching for: not those in more than a tenth of the chunks. Such
    words weigh little in BM25 but make a search visit most of the index (at 100k chunks,
    250 ms instead of a few). At least the two rarest stay. Words the index lacks stay
    too: they still count towards the two words a chunk must share with the question."""
    limit = max(COMMON_WORD_MIN_CHUNKS, chunks * COMMON_WORD_SHARE)
    rarest = sorted(words, key=lambda w: frequency.get(w, 0))[:2]
    return [w for w in words if frequency.get(w, 0) <= limit or w in rarest]


def build_match_query(words: list[str]) -> str:
    """An FTS5 query for chunks that hold at least two of the words (all of them when there
    are fewer), each quoted so that no word is syntax.

    Matching any single word (a plain OR) lets chunks that share one common word with a
    question outrank good vector hits after fusion; two shared words is the usual
    "minimum should match" compromise of keyword engines.
    """
    quoted = [f'"{word}"' for word in words[:MAX_QUERY_WORDS]]
    if len(quoted) <= 2:
        return " AND ".join(quoted)
    return " OR ".join(f"({a} AND {b})" for a, b in itertools.combinations(quoted, 2))


def _filter_sql(filters: SearchFilters) -> tuple[str, list[Any]]:
    """SQL conditions on chunks `c` and documents `d`. The unary `+` keeps SQLite from
    driving the query by the collection index (all chunks of a collection) instead of
    the chunk ids or the full-text match: 5 ms -> 0.3 ms at 10k chunks."""
    clauses, params = [], []
    if filters.collections:
        clauses.append(f"+c.collection IN ({','.join('?' * len(filters.collections))})")
        params += filters.collections
    if filters.sources:
        clauses.append(f"d.source IN ({','.join('?' * len(filters.sources))})")
        params += filters.sources
    rooms = ("", *filters.rooms)
    clauses.append(f"d.room IN ({','.join('?' * len(rooms))})")
    params += rooms
    for room, since in filters.rooms_since:
        clauses.append(
            "(d.room != ? OR EXISTS (SELECT 1 FROM document_dates dd WHERE dd.collection ="
            " d.collection AND dd.doc_id = d.doc_id AND dd.date_from >= ?))"
        )
        params += (room, since)
    if filters.updated_after is not None:
        clauses.append("d.updated_at >= ?")
        params.append(filters.updated_after)
    if filters.updated_before is not None:
        clauses.append("d.updated_at <= ?")
        params.append(filters.updated_before)
    if filters.dated_between is not None:
        clauses.append(
            "NOT EXISTS (SELECT 1 FROM document_dates dd WHERE dd.collection = d.collection"
            " AND dd.doc_id = d.doc_id AND (dd.date_to <= ? OR dd.date_from >= ?))"
        )
        params += filters.dated_between
    return " AND ".join(clauses), params


class Catalog:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Used from the event loop and from worker threads, one statement at a time.
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._lock = threading.RLock()
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        # Under the lock: a search may still run in a worker thread (a cancelled task's
        # thread runs on), and closing a connection in use crashes the process.
        with self._lock:
            self._db.close()

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def document(self, collection: str, doc_id: str) -> DocumentRecord | None:
        rows = self._query(
            "SELECT * FROM documents WHERE collection = ? AND doc_id = ?", (collection, doc_id)
        )
        return DocumentRecord(*rows[0]) if rows else None

    def replace_document(
        self,
        record: DocumentRecord,
        chunks: Iterable[ChunkRow],
        dates: tuple[float, float] | None = None,
    ) -> None:
        """Swap in a document's new version, chunks and dates, all at once."""
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "DELETE FROM chunks WHERE collection = ? AND doc_id = ?",
                (record.collection, record.doc_id),
            )
            self._db.executemany(
                "INSERT INTO chunks (chunk_id, collection, doc_id, position, title, heading, text)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        c.chunk_id,
                        record.collection,
                        record.doc_id,
                        c.position,
                        record.title,
                        c.heading,
                        c.text,
                    )
                    for c in chunks
                ],
            )
            self._db.execute(
                "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.collection,
                    record.doc_id,
                    record.source,
                    record.title,
                    record.url,
                    record.language,
                    record.version,
                    record.room,
                    int(record.public),
                    record.content_hash,
                    record.chunk_count,
                    record.updated_at,
                ),
            )
            self._db.execute(
                "DELETE FROM document_dates WHERE collection = ? AND doc_id = ?",
                (record.collection, record.doc_id),
            )
            if dates is not None:
                self._db.execute(
                    "INSERT INTO document_dates VALUES (?, ?, ?, ?)",
                    (record.collection, record.doc_id, *dates),
                )

    def delete_document(self, collection: str, doc_id: str) -> bool:
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "DELETE FROM chunks WHERE collection = ? AND doc_id = ?", (collection, doc_id)
            )
            self._db.execute(
                "DELETE FROM document_dates WHERE collection = ? AND doc_id = ?",
                (collection, doc_id),
            )
            deleted = self._db.execute(
                "DELETE FROM documents WHERE collection = ? AND doc_id = ?", (collection, doc_id)
            )
            return deleted.rowcount > 0

    def collection_sizes(self) -> dict[str, tuple[int, int]]:
        """Documents and chunks per collection."""
        rows = self._query(
            "SELECT collection, COUNT(*), COALESCE(SUM(chunk_count), 0)"
            " FROM documents GROUP BY collection"
        )
        return {name: (documents, chunks) for name, documents, chunks in rows}

    def _word_frequencies(self, words: list[str]) -> tuple[dict[str, int], int]:
        """How many chunks hold each word, and (an upper bound of) how many chunks there are."""
        if not words:
            return {}, 0
        rows = self._query(
            f"SELECT term, doc FROM chunk_vocab WHERE term IN ({','.join('?' * len(words))})",
            words,
        )
        chunks = self._query("SELECT COALESCE(MAX(rowid), 0) FROM chunks")[0][0]
        return dict(rows), chunks

    def keyword_search(self, text: str, filters: SearchFilters, limit: int) -> list[str]:
        """Chunk ids ranked by BM25 (title and heading count more than body text)."""
        words = parse_query_words(text)
        match = build_match_query(decide_selective_words(words, *self._word_frequencies(words)))
        if not match:
            return []
        where, params = _filter_sql(filters)
        rows = self._query(
            "SELECT c.chunk_id FROM chunk_fts"
            " JOIN chunks c ON c.rowid = chunk_fts.rowid"
            " JOIN documents d ON d.collection = c.collection AND d.doc_id = c.doc_id"
            f" WHERE chunk_fts MATCH ? AND {where}"
            " ORDER BY bm25(chunk_fts, 2.0, 1.5, 1.0) LIMIT ?",
            [match, *params, limit],
        )
        return [row[0] for row in rows]

    def current_chunks(self, chunk_ids: Sequence[str], filters: SearchFilters) -> dict[str, tuple]:
        """Rows (see HIT_COLUMNS) of the ids that are current and pass the filters."""
        if not chunk_ids:
            return {}
        where, params = _filter_sql(filters)
        rows = self._query(
            f"SELECT {HIT_COLUMNS} FROM chunks c"
            " JOIN documents d ON d.collection = c.collection AND d.doc_id = c.doc_id"
            f" WHERE c.chunk_id IN ({','.join('?' * len(chunk_ids))}) AND {where}",
            [*chunk_ids, *params],
        )
        return {row[0]: row for row in rows}

    def add_job(self, collection: str, doc_id: str, op: str, payload: dict | None) -> int:
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO jobs (collection, doc_id, op, payload, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (collection, doc_id, op, json.dumps(payload) if payload else None, time.time()),
            )
            return int(cursor.lastrowid or 0)

    def _job(self, row: tuple) -> Job:
        id_, collection, doc_id, op, payload, state, error, _ = row
        return Job(
            id_, collection, doc_id, op, json.loads(payload) if payload else None, state, error
        )

    def queued_jobs(self, limit: int) -> list[Job]:
        rows = self._query(
            "SELECT * FROM jobs WHERE state = 'queued' ORDER BY id LIMIT ?", (limit,)
        )
        return [self._job(row) for row in rows]

    def finish_job(self, job_id: int, error: str | None = None) -> None:
        """A done job is removed; a failed one is kept, with its error, for the status API."""
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            job = self._db.execute(
                "SELECT collection, doc_id FROM jobs WHERE id = ?", (job_id,)
            ).fetchone()
            if job:
                # Older failures of the same document are history once a newer job ends.
                self._db.execute(
                    "DELETE FROM jobs WHERE collection = ? AND doc_id = ? AND id < ?"
                    " AND state = 'failed'",
                    (*job, job_id),
                )
            if error is None:
                self._db.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
            else:
                self._db.execute(
                    "UPDATE jobs SET state = 'failed', error = ?, payload = NULL WHERE id = ?",
                    (error, job_id),
                )

    def job(self, job_id: int) -> Job | None:
        rows = self._query("SELECT * FROM jobs WHERE id = ?", (job_id,))
        return self._job(rows[0]) if rows else None

    def latest_job(self, collection: str, doc_id: str) -> Job | None:
        rows = self._query(
            "SELECT * FROM jobs WHERE collection = ? AND doc_id = ? ORDER BY id DESC LIMIT 1",
            (collection, doc_id),
        )
        return self._job(rows[0]) if rows else None

    def queue_depth(self) -> int:
        return self._query("SELECT COUNT(*) FROM jobs WHERE state = 'queued'")[0][0]
