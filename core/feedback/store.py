"""Feedback and the traces of answers, durable in SQLite (`feedback.sqlite3` in the data
folder): every vote can be traced to the question, its rephrasing, the sources and their
scores, the model and the prompt version.

A person's vote on an answer is their latest reaction that is not redacted, so reacting
twice counts once and removing a reaction withdraws it (or brings back the earlier one).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.feedback.votes import Vote
from core.sqlite_store import SqliteStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    answer_id TEXT PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, room TEXT NOT NULL,
    asker TEXT NOT NULL, question TEXT NOT NULL, rephrased TEXT NOT NULL,
    answer TEXT NOT NULL, kind TEXT NOT NULL, model TEXT NOT NULL,
    prompt_version TEXT NOT NULL, trace TEXT NOT NULL, created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS answer_sources (
    answer_id TEXT NOT NULL, position INTEGER NOT NULL, collection TEXT NOT NULL,
    document_id TEXT NOT NULL, title TEXT NOT NULL, url TEXT NOT NULL, score REAL,
    PRIMARY KEY (answer_id, position)
);
CREATE TABLE IF NOT EXISTS answer_readers (
    answer_id TEXT NOT NULL, user TEXT NOT NULL, PRIMARY KEY (answer_id, user)
);
CREATE TABLE IF NOT EXISTS answer_events (
    event_id TEXT PRIMARY KEY, answer_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reactions (
    reaction_event TEXT PRIMARY KEY, answer_id TEXT NOT NULL, user TEXT NOT NULL,
    vote TEXT NOT NULL, ts REAL NOT NULL, redacted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS reactions_of_answer ON reactions (answer_id, user);
CREATE VIEW IF NOT EXISTS votes AS
    SELECT r.answer_id, r.user, r.vote, r.ts FROM reactions r
    WHERE r.redacted = 0 AND r.ts = (
        SELECT MAX(ts) FROM reactions x
        WHERE x.answer_id = r.answer_id AND x.user = r.user AND x.redacted = 0
    );
CREATE TABLE IF NOT EXISTS comments (
    id INTEGER PRIMARY KEY, answer_id TEXT NOT NULL, user TEXT NOT NULL,
    text TEXT NOT NULL, ts REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS asks (
    room TEXT NOT NULL, thread TEXT NOT NULL, user TEXT NOT NULL, answer_id TEXT NOT NULL,
    asked REAL NOT NULL, PRIMARY KEY (room, thread, user)
);
"""


@dataclass(frozen=True)
class SourceRecord:
    collection: str
    document_id: str
    title: str
    url: str
    score: float | None


@dataclass(frozen=True)
class AnswerRecord:
    answer_id: str
    event_id: str
    room: str
    asker: str
    question: str
    rephrased: str
    answer: str
    kind: str
    model: str
    prompt_version: str
    trace: list[dict[str, Any]]
    sources: tuple[SourceRecord, ...]
    created: float
    # Everyone the answer was written for; an answer stored before readers were kept
    # has none, and so is shown in detail to nobody.
    readers: tuple[str, ...] = ()


@dataclass(frozen=True)
class RoomCounts:
    room: str
    up: int
    down: int


class FeedbackStore(SqliteStore):
    def __init__(self, path: Path) -> None:
        super().__init__(path, SCHEMA)
        self.version = 0  # grows with every change of votes, for caches

    def store_answer(self, record: AnswerRecord) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (record.answer_id, record.event_id, record.room, record.asker, record.question,
                 record.rephrased, record.answer, record.kind, record.model,
                 record.prompt_version, json.dumps(record.trace, default=str), record.created),
            )  # fmt: skip
            self._db.execute(
                "INSERT OR REPLACE INTO answer_events VALUES (?, ?)",
                (record.event_id, record.answer_id),
            )
            self._db.executemany(
                "INSERT OR IGNORE INTO answer_readers VALUES (?, ?)",
                [(record.answer_id, reader) for reader in record.readers],
            )
            self._db.executemany(
                "INSERT OR REPLACE INTO answer_sources VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(record.answer_id, n, s.collection, s.document_id, s.title, s.url, s.score)
                 for n, s in enumerate(record.sources, start=1)],
            )  # fmt: skip

    def note_answer_event(self, event_id: str, answer_id: str) -> None:
        """The message of an answer still being written: a vote on it counts already."""
        self._run("INSERT OR REPLACE INTO answer_events VALUES (?, ?)", (event_id, answer_id))

    def forget_answer_event(self, event_id: str) -> None:
        """The message turned out not to be an answer (a failure notice took its place):
        reactions on it are no votes."""
        self._run("DELETE FROM answer_events WHERE event_id = ?", (event_id,))

    def answer_of_event(self, event_id: str) -> str | None:
        rows = self._run("SELECT answer_id FROM answer_events WHERE event_id = ?", (event_id,))
        return rows[0][0] if rows else None

    def is_reaction(self, event_id: str) -> bool:
        return bool(self._run("SELECT 1 FROM reactions WHERE reaction_event = ?", (event_id,)))

    def add_reaction(self, event_id: str, answer_id: str, user: str, vote: Vote, ts: float):
        self._run(
            "INSERT OR IGNORE INTO reactions (reaction_event, answer_id, user, vote, ts) "
            "VALUES (?, ?, ?, ?, ?)",
            (event_id, answer_id, user, vote, ts),
        )
        self.version += 1

    def redact(self, event_id: str) -> None:
        self._run("UPDATE reactions SET redacted = 1 WHERE reaction_event = ?", (event_id,))
        self.version += 1

    def vote_of(self, answer_id: str, user: str) -> Vote | None:
        rows = self._run(
            "SELECT vote FROM votes WHERE answer_id = ? AND user = ?", (answer_id, user)
        )
        return rows[0][0] if rows else None

    # The question after a 👎, and its reply.
    def ask(self, room: str, thread: str, user: str, answer_id: str) -> None:
        self._run(
            "INSERT OR REPLACE INTO asks VALUES (?, ?, ?, ?, ?)",
            (room, thread, user, answer_id, time.time()),
        )

    def pending_ask(self, room: str, thread: str, user: str) -> str | None:
        rows = self._run(
            "SELECT answer_id FROM asks WHERE room = ? AND thread = ? AND user = ?",
            (room, thread, user),
        )
        return rows[0][0] if rows else None

    def add_comment(self, room: str, thread: str, user: str, text: str) -> None:
        """Keep the reply to the question, and close the question."""
        answer_id = self.pending_ask(room, thread, user)
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO comments (answer_id, user, text, ts) VALUES (?, ?, ?, ?)",
                (answer_id or "", user, text, time.time()),
            )
            self._db.execute(
                "DELETE FROM asks WHERE room = ? AND thread = ? AND user = ?", (room, thread, user)
            )

    # What retrieval and the reports read.
    def document_votes(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(up, down) per document cited in an answer that has votes."""
        rows = self._run(
            "SELECT s.collection, s.document_id, SUM(v.vote = 'up'), SUM(v.vote = 'down') "
            "FROM votes v JOIN answer_sources s ON s.answer_id = v.answer_id "
            "GROUP BY s.collection, s.document_id"
        )
        return {(c, d): (int(up), int(down)) for c, d, up, down in rows}

    def room_counts(self, since: float) -> list[RoomCounts]:
        rows = self._run(
            "SELECT a.room, SUM(v.vote = 'up'), SUM(v.vote = 'down') FROM votes v "
            "JOIN answers a ON a.answer_id = v.answer_id WHERE v.ts >= ? "
            "GROUP BY a.room ORDER BY a.room",
            (since,),
        )
        return [RoomCounts(room, int(up), int(down)) for room, up, down in rows]

    def worst(self, since: float, limit: int) -> list[dict[str, Any]]:
        """The answers with the most 👎 over 👍, with their questions and sources."""
        rows = self._run(
            "SELECT a.answer_id, a.room, a.question, SUM(v.vote = 'up'), SUM(v.vote = 'down') "
            "FROM votes v JOIN answers a ON a.answer_id = v.answer_id WHERE v.ts >= ? "
            "GROUP BY a.answer_id HAVING SUM(v.vote = 'down') > 0 "
            "ORDER BY SUM(v.vote = 'down') - SUM(v.vote = 'up') DESC, MAX(v.ts) DESC LIMIT ?",
            (since, limit),
        )
        return [
            {"answer_id": answer_id, "room": room, "question": question, "up": int(up),
             "down": int(down), "sources": self._sources(answer_id),
             "comments": self._comments(answer_id), "readers": self._readers(answer_id)}
            for answer_id, room, question, up, down in rows
        ]  # fmt: skip

    def _sources(self, answer_id: str) -> list[dict[str, Any]]:
        rows = self._run(
            "SELECT collection, document_id, title, url, score FROM answer_sources "
            "WHERE answer_id = ? ORDER BY position",
            (answer_id,),
        )
        keys = ("collection", "document_id", "title", "url", "score")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def _readers(self, answer_id: str) -> list[str]:
        rows = self._run("SELECT user FROM answer_readers WHERE answer_id = ?", (answer_id,))
        return sorted(row[0] for row in rows)

    def _comments(self, answer_id: str) -> list[str]:
        rows = self._run("SELECT text FROM comments WHERE answer_id = ? ORDER BY id", (answer_id,))
        return [row[0] for row in rows]

    def export(self, since: float) -> Iterator[dict[str, Any]]:
        """One record per voted answer: the answer's trace, its votes and comments."""
        rows = self._run(
            "SELECT * FROM answers WHERE answer_id IN "
            "(SELECT answer_id FROM votes WHERE ts >= ?) ORDER BY created",
            (since,),
        )
        columns = ("answer_id", "event_id", "room", "asker", "question", "rephrased", "answer",
                   "kind", "model", "prompt_version", "trace", "created")  # fmt: skip
        for row in rows:
            record = dict(zip(columns, row, strict=True))
            record["trace"] = json.loads(record["trace"])
            record["sources"] = self._sources(record["answer_id"])
            record["votes"] = [
                {"user": user, "vote": vote, "ts": ts}
                for user, vote, ts in self._run(
                    "SELECT user, vote, ts FROM votes WHERE answer_id = ?", (record["answer_id"],)
                )
            ]
            record["comments"] = self._comments(record["answer_id"])
            record["readers"] = self._readers(record["answer_id"])
            yield record
