"""Feedback and the traces of answers: every vote can be traced to the question, its
rephrasing, the sources and their scores, the model and the prompt version.

A person's vote on an answer is their latest reaction that is not redacted, so reacting
twice counts once and removing a reaction withdraws it (or brings back the earlier one).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from core.feedback.votes import Vote
from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

# The schema of the release before versioned migrations, adopted in place as version 1.
V1_SQLITE = """
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

V1_POSTGRES = """
CREATE TABLE IF NOT EXISTS answers (
    answer_id TEXT PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, room TEXT NOT NULL,
    asker TEXT NOT NULL, question TEXT NOT NULL, rephrased TEXT NOT NULL,
    answer TEXT NOT NULL, kind TEXT NOT NULL, model TEXT NOT NULL,
    prompt_version TEXT NOT NULL, trace TEXT NOT NULL, created DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS answer_sources (
    answer_id TEXT NOT NULL, position INTEGER NOT NULL, collection TEXT NOT NULL,
    document_id TEXT NOT NULL, title TEXT NOT NULL, url TEXT NOT NULL, score DOUBLE PRECISION,
    PRIMARY KEY (answer_id, position)
);
CREATE TABLE IF NOT EXISTS answer_readers (
    answer_id TEXT NOT NULL, "user" TEXT NOT NULL, PRIMARY KEY (answer_id, "user")
);
CREATE TABLE IF NOT EXISTS answer_events (
    event_id TEXT PRIMARY KEY, answer_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reactions (
    reaction_event TEXT PRIMARY KEY, answer_id TEXT NOT NULL, "user" TEXT NOT NULL,
    vote TEXT NOT NULL, ts DOUBLE PRECISION NOT NULL, redacted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS reactions_of_answer ON reactions (answer_id, "user");
CREATE OR REPLACE VIEW votes AS
    SELECT r.answer_id, r."user", r.vote, r.ts FROM reactions r
    WHERE r.redacted = 0 AND r.ts = (
        SELECT MAX(ts) FROM reactions x
        WHERE x.answer_id = r.answer_id AND x."user" = r."user" AND x.redacted = 0
    );
CREATE TABLE IF NOT EXISTS comments (
    id BIGSERIAL PRIMARY KEY, answer_id TEXT NOT NULL, "user" TEXT NOT NULL,
    text TEXT NOT NULL, ts DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS asks (
    room TEXT NOT NULL, thread TEXT NOT NULL, "user" TEXT NOT NULL, answer_id TEXT NOT NULL,
    asked DOUBLE PRECISION NOT NULL, PRIMARY KEY (room, thread, "user")
);
"""

# Every process's ranking cache compares this count with the one it computed from.
V2 = """
CREATE TABLE IF NOT EXISTS vote_changes (id INTEGER PRIMARY KEY, changes BIGINT NOT NULL);
INSERT INTO vote_changes VALUES (1, 0) ON CONFLICT DO NOTHING;
"""
BUMP = "UPDATE vote_changes SET changes = changes + 1 WHERE id = 1"

# An answer knows the message it answered and whether its room was encrypted (NULL:
# not known, which counts as encrypted); a comment knows its message. So a redaction
# removes their text, and a report in an unencrypted room never quotes encrypted ones.
V3 = """
ALTER TABLE answers ADD COLUMN question_event TEXT NOT NULL DEFAULT '';
ALTER TABLE answers ADD COLUMN encrypted INTEGER;
ALTER TABLE comments ADD COLUMN event_id TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS answers_of_question ON answers (question_event);
CREATE INDEX IF NOT EXISTS answers_created ON answers (created);
CREATE INDEX IF NOT EXISTS comments_of_event ON comments (event_id);
"""

UPGRADES = UpgradeTable(
    "feedback",
    [
        Upgrade(
            "answers, their sources, readers and events, votes, comments", V1_SQLITE, V1_POSTGRES
        ),
        Upgrade("a count of vote changes, shared by every process", V2, V2),
        Upgrade("answers and comments that follow redactions and encryption", V3, V3),
    ],
)
ANSWER_COLUMNS = (
    "answer_id",
    "event_id",
    "room",
    "asker",
    "question",
    "rephrased",
    "answer",
    "kind",
    "model",
    "prompt_version",
    "trace",
    "created",
    "question_event",
    "encrypted",
)
# What an answer's record holds of people's words: blanked when they take them back.
NO_TEXT = "question = '', rephrased = '', answer = '', trace = '[]'"
UP = "SUM(CASE WHEN v.vote = 'up' THEN 1 ELSE 0 END)"
DOWN = "SUM(CASE WHEN v.vote = 'down' THEN 1 ELSE 0 END)"


def _of_no_other_room(table: str) -> str:
    """A condition on a row of `table` that a redaction may reach: a redaction names its
    target by event id alone, so the row must not be known to be of another room than
    the redaction's (the one parameter), by its answer's room. A row whose answer is
    gone is nobody else's either: it still goes."""
    return (
        "NOT EXISTS (SELECT 1 FROM answers other"
        f" WHERE other.answer_id = {table}.answer_id AND other.room <> ?)"
    )


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
    # The message that asked, and whether its room was end-to-end encrypted.
    question_event: str = ""
    encrypted: bool | None = None  # not said: counts as encrypted


@dataclass(frozen=True)
class RoomCounts:
    room: str
    up: int
    down: int


class FeedbackStore(Protocol):
    async def votes_version(self) -> int: ...
    async def store_answer(self, record: AnswerRecord) -> None: ...
    async def note_answer_event(self, event_id: str, answer_id: str) -> None: ...
    async def forget_answer_event(self, event_id: str) -> None: ...
    async def answer_of_event(self, event_id: str, room: str | None = None) -> str | None: ...
    async def is_reaction(self, room: str, event_id: str) -> bool: ...
    async def add_reaction(
        self, event_id: str, answer_id: str, user: str, vote: Vote, ts: float
    ) -> None: ...
    async def redact(self, room: str, event_id: str) -> None: ...
    async def vote_of(self, answer_id: str, user: str) -> Vote | None: ...
    async def ask(self, room: str, thread: str, user: str, answer_id: str) -> None: ...
    async def pending_ask(self, room: str, thread: str, user: str) -> str | None: ...
    async def add_comment(
        self, room: str, thread: str, user: str, text: str, event_id: str = ""
    ) -> None: ...
    async def forget_event(self, room: str, event_id: str) -> None: ...
    async def purge_room_before(self, room: str, cutoff: float) -> None: ...
    async def purge_before(self, cutoff: float) -> int: ...
    async def document_votes(self) -> dict[tuple[str, str], tuple[int, int]]: ...
    async def room_counts(self, since: float) -> list[RoomCounts]: ...
    async def worst(self, since: float, limit: int) -> list[dict[str, Any]]: ...
    async def erase_freed(self) -> None: ...
    def export(self, since: float) -> AsyncIterator[dict[str, Any]]: ...


class SqlFeedbackStore(SqlStore):
    """The feedback store over either backend. `"user"` is quoted: PostgreSQL reserves it."""

    upgrades = UPGRADES

    async def votes_version(self) -> int:
        """Grows with every change of votes, made by any process (for caches)."""
        return int(await self.db.fetchval("SELECT changes FROM vote_changes WHERE id = 1"))

    async def store_answer(self, record: AnswerRecord) -> None:
        async with self.db.transaction() as tx:
            # The same message answered again after a restart (a new answer id) replaces
            # the earlier answer, as the message's answer.
            earlier = await tx.fetch(
                "SELECT answer_id FROM answers WHERE answer_id = ? OR event_id = ?",
                record.answer_id,
                record.event_id,
            )
            for (answer_id,) in earlier:
                for table in ("answers", "answer_sources", "answer_readers"):
                    await tx.execute(f"DELETE FROM {table} WHERE answer_id = ?", answer_id)
            await tx.execute(
                f"INSERT INTO answers ({', '.join(ANSWER_COLUMNS)})"
                f" VALUES ({', '.join('?' * len(ANSWER_COLUMNS))})",
                record.answer_id,
                record.event_id,
                record.room,
                record.asker,
                record.question,
                record.rephrased,
                record.answer,
                record.kind,
                record.model,
                record.prompt_version,
                json.dumps(record.trace, default=str),
                record.created,
                record.question_event,
                None if record.encrypted is None else int(record.encrypted),
            )
            await tx.execute(
                "INSERT INTO answer_events VALUES (?, ?) ON CONFLICT (event_id)"
                " DO UPDATE SET answer_id = excluded.answer_id",
                record.event_id,
                record.answer_id,
            )
            await tx.executemany(
                "INSERT INTO answer_readers VALUES (?, ?) ON CONFLICT DO NOTHING",
                [(record.answer_id, reader) for reader in record.readers],
            )
            await tx.executemany(
                "INSERT INTO answer_sources VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (record.answer_id, n, s.collection, s.document_id, s.title, s.url, s.score)
                    for n, s in enumerate(record.sources, start=1)
                ],
            )

    async def note_answer_event(self, event_id: str, answer_id: str) -> None:
        """The message of an answer still being written: a vote on it counts already."""
        await self.db.execute(
            "INSERT INTO answer_events VALUES (?, ?) ON CONFLICT (event_id)"
            " DO UPDATE SET answer_id = excluded.answer_id",
            event_id,
            answer_id,
        )

    async def forget_answer_event(self, event_id: str) -> None:
        """The message turned out not to be an answer (a failure notice took its place):
        reactions on it are no votes."""
        await self.db.execute("DELETE FROM answer_events WHERE event_id = ?", event_id)

    async def answer_of_event(self, event_id: str, room: str | None = None) -> str | None:
        """The answer a message of the bot holds; with `room`, only an answer of that room
        (or one not recorded yet): a reaction names its target by event id alone."""
        if room is None:
            query = "SELECT answer_id FROM answer_events WHERE event_id = ?"
            return await self.db.fetchval(query, event_id)
        of_room = _of_no_other_room("answer_events")
        query = f"SELECT answer_id FROM answer_events WHERE event_id = ? AND {of_room}"
        return await self.db.fetchval(query, event_id, room)

    async def is_reaction(self, room: str, event_id: str) -> bool:
        """Whether the event is a vote on one of the room's answers."""
        of_room = _of_no_other_room("reactions")
        query = f"SELECT 1 FROM reactions WHERE reaction_event = ? AND {of_room}"
        return await self.db.fetchrow(query, event_id, room) is not None

    async def add_reaction(
        self, event_id: str, answer_id: str, user: str, vote: Vote, ts: float
    ) -> None:
        async with self.db.transaction() as tx:
            await tx.execute(
                'INSERT INTO reactions (reaction_event, answer_id, "user", vote, ts) '
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                event_id,
                answer_id,
                user,
                vote,
                ts,
            )
            await tx.execute(BUMP)

    async def redact(self, room: str, event_id: str) -> None:
        """A vote on one of the room's answers was taken back (its reaction redacted)."""
        of_room = _of_no_other_room("reactions")
        query = f"UPDATE reactions SET redacted = 1 WHERE reaction_event = ? AND {of_room}"
        async with self.db.transaction() as tx:
            await tx.execute(query, event_id, room)
            await tx.execute(BUMP)

    async def vote_of(self, answer_id: str, user: str) -> Vote | None:
        query = 'SELECT vote FROM votes WHERE answer_id = ? AND "user" = ?'
        return await self.db.fetchval(query, answer_id, user)

    # The question after a 👎, and its reply.
    async def ask(self, room: str, thread: str, user: str, answer_id: str) -> None:
        await self.db.execute(
            'INSERT INTO asks VALUES (?, ?, ?, ?, ?) ON CONFLICT (room, thread, "user")'
            " DO UPDATE SET answer_id = excluded.answer_id, asked = excluded.asked",
            room,
            thread,
            user,
            answer_id,
            time.time(),
        )

    async def pending_ask(self, room: str, thread: str, user: str) -> str | None:
        return await self.db.fetchval(
            'SELECT answer_id FROM asks WHERE room = ? AND thread = ? AND "user" = ?',
            room,
            thread,
            user,
        )

    async def add_comment(
        self, room: str, thread: str, user: str, text: str, event_id: str = ""
    ) -> None:
        """Keep the reply to the question (the message `event_id`), and close the question."""
        async with self.db.transaction() as tx:
            answer_id = await tx.fetchval(
                'SELECT answer_id FROM asks WHERE room = ? AND thread = ? AND "user" = ?',
                room,
                thread,
                user,
            )
            await tx.execute(
                'INSERT INTO comments (answer_id, "user", text, ts, event_id)'
                " VALUES (?, ?, ?, ?, ?)",
                answer_id or "",
                user,
                text,
                time.time(),
                event_id,
            )
            await tx.execute(
                'DELETE FROM asks WHERE room = ? AND thread = ? AND "user" = ?', room, thread, user
            )

    # What people take back, and what is kept no longer.
    async def forget_event(self, room: str, event_id: str) -> None:
        """A message of the room was redacted: the question it asked, the answer to it
        (when the answer is the redacted one) and a comment it made lose their text;
        nothing of another room does."""
        async with self.db.transaction() as tx:
            await tx.execute(
                f"UPDATE answers SET {NO_TEXT} WHERE question_event = ? AND room = ?",
                event_id,
                room,
            )
            await tx.execute(
                f"UPDATE answers SET {NO_TEXT} WHERE room = ? AND answer_id IN"
                " (SELECT answer_id FROM answer_events WHERE event_id = ?)",
                room,
                event_id,
            )
            await tx.execute(
                f"DELETE FROM comments WHERE event_id = ? AND {_of_no_other_room('comments')}",
                event_id,
                room,
            )

    async def purge_room_before(self, room: str, cutoff: float) -> None:
        """The room's retention: its answers from before `cutoff` keep their votes, not
        their text."""
        async with self.db.transaction() as tx:
            old = "SELECT answer_id FROM answers WHERE room = ? AND created < ?"
            await tx.execute(f"DELETE FROM comments WHERE answer_id IN ({old})", room, cutoff)
            await tx.execute(
                f"UPDATE answers SET {NO_TEXT} WHERE room = ? AND created < ?", room, cutoff
            )

    async def purge_before(self, cutoff: float) -> int:
        """`feedback.keep_days`: answers from before `cutoff` go with everything kept of
        them; returns how many."""
        async with self.db.transaction() as tx:
            old = "SELECT answer_id FROM answers WHERE created < ?"
            for table in (
                "answer_sources",
                "answer_readers",
                "answer_events",
                "reactions",
                "comments",
                "asks",
            ):
                await tx.execute(f"DELETE FROM {table} WHERE answer_id IN ({old})", cutoff)
            removed = await tx.execute("DELETE FROM answers WHERE created < ?", cutoff)
            await tx.execute(BUMP)
        return removed

    # What retrieval and the reports read.
    async def document_votes(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(up, down) per document cited in an answer that has votes."""
        rows = await self.db.fetch(
            f"SELECT s.collection, s.document_id, {UP}, {DOWN} "
            "FROM votes v JOIN answer_sources s ON s.answer_id = v.answer_id "
            "GROUP BY s.collection, s.document_id"
        )
        return {(c, d): (int(up), int(down)) for c, d, up, down in rows}

    async def room_counts(self, since: float) -> list[RoomCounts]:
        rows = await self.db.fetch(
            f"SELECT a.room, {UP}, {DOWN} FROM votes v "
            "JOIN answers a ON a.answer_id = v.answer_id WHERE v.ts >= ? "
            "GROUP BY a.room ORDER BY a.room",
            since,
        )
        return [RoomCounts(room, int(up), int(down)) for room, up, down in rows]

    async def worst(self, since: float, limit: int) -> list[dict[str, Any]]:
        """The answers with the most 👎 over 👍, with their questions and sources."""
        rows = await self.db.fetch(
            f"SELECT a.answer_id, a.room, a.question, a.encrypted, {UP}, {DOWN} "
            "FROM votes v JOIN answers a ON a.answer_id = v.answer_id WHERE v.ts >= ? "
            f"GROUP BY a.answer_id, a.room, a.question, a.encrypted HAVING {DOWN} > 0 "
            f"ORDER BY {DOWN} - {UP} DESC, MAX(v.ts) DESC LIMIT ?",
            since,
            limit,
        )
        return [
            {
                "answer_id": answer_id,
                "room": room,
                "question": question,
                "up": int(up),
                "down": int(down),
                "sources": await self._sources(answer_id),
                "comments": await self._comments(answer_id),
                "readers": await self._readers(answer_id),
                "encrypted": None if encrypted is None else bool(encrypted),
            }
            for answer_id, room, question, encrypted, up, down in rows
        ]

    async def _sources(self, answer_id: str) -> list[dict[str, Any]]:
        rows = await self.db.fetch(
            "SELECT collection, document_id, title, url, score FROM answer_sources "
            "WHERE answer_id = ? ORDER BY position",
            answer_id,
        )
        keys = ("collection", "document_id", "title", "url", "score")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    async def _readers(self, answer_id: str) -> list[str]:
        query = 'SELECT "user" FROM answer_readers WHERE answer_id = ?'
        return sorted(row[0] for row in await self.db.fetch(query, answer_id))

    async def _comments(self, answer_id: str) -> list[str]:
        query = "SELECT text FROM comments WHERE answer_id = ? ORDER BY id"
        return [row[0] for row in await self.db.fetch(query, answer_id)]

    async def export(self, since: float) -> AsyncIterator[dict[str, Any]]:
        """One record per voted answer: the answer's trace, its votes and comments."""
        rows = await self.db.fetch(
            f"SELECT {', '.join(ANSWER_COLUMNS)} FROM answers WHERE answer_id IN "
            "(SELECT answer_id FROM votes WHERE ts >= ?) ORDER BY created",
            since,
        )
        for row in rows:
            record = dict(zip(ANSWER_COLUMNS, row, strict=True))
            if record["encrypted"] is not None:
                record["encrypted"] = bool(record["encrypted"])
            answer_id = record["answer_id"]
            record["trace"] = json.loads(record["trace"])
            record["sources"] = await self._sources(answer_id)
            votes = await self.db.fetch(
                'SELECT "user", vote, ts FROM votes WHERE answer_id = ?', answer_id
            )
            record["votes"] = [{"user": user, "vote": vote, "ts": ts} for user, vote, ts in votes]
            record["comments"] = await self._comments(answer_id)
            record["readers"] = await self._readers(answer_id)
            yield record
