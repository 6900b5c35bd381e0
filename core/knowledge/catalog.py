"""The catalog: which version of each document is current, and its chunks' text.

It is the source of truth for what readers see: a document's chunks are swapped in one
transaction, and Chroma only proposes candidate chunk ids, so chunks of a replaced or
half-written version are never returned. The chunks' text is indexed for the keyword
side of hybrid search in the language of each collection: on SQLite an FTS5 table of
the chunks' Snowball stems (written here, core/knowledge/keywords.py) ranked by `bm25()`,
on PostgreSQL a `tsvector` of the language's text search configuration ranked by
`ts_rank()` (see the README on how the two differ). A collection indexed in another
language (or before languages) is indexed again once, when the process starts
(`align_languages`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import astuple, dataclass, replace
from typing import Any, Protocol, Self

from core.knowledge.documents import SearchFilters
from core.knowledge.keywords import (
    ENGLISH,
    build_index_text,
    build_match_query,
    build_tsquery,
    decide_selective_words,
    parse_query_stems,
    parse_query_words,
    postgres_config,
)
from core.storage.database import Database, Dialect, Row
from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

V1_SQLITE = """
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
"""

V1_POSTGRES = """
CREATE TABLE IF NOT EXISTS documents (
    collection TEXT NOT NULL, doc_id TEXT NOT NULL, source TEXT NOT NULL,
    title TEXT NOT NULL, url TEXT NOT NULL, language TEXT NOT NULL, version TEXT NOT NULL,
    room TEXT NOT NULL, public INTEGER NOT NULL, content_hash TEXT NOT NULL,
    chunk_count INTEGER NOT NULL, updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (collection, doc_id)
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid BIGSERIAL PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE,
    collection TEXT NOT NULL, doc_id TEXT NOT NULL, position INTEGER NOT NULL,
    title TEXT NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL, search TSVECTOR
);
CREATE INDEX IF NOT EXISTS chunks_of_document ON chunks (collection, doc_id);
CREATE INDEX IF NOT EXISTS chunks_search ON chunks USING GIN (search);
CREATE TABLE IF NOT EXISTS document_dates (
    collection TEXT NOT NULL, doc_id TEXT NOT NULL, date_from DOUBLE PRECISION NOT NULL,
    date_to DOUBLE PRECISION NOT NULL, PRIMARY KEY (collection, doc_id)
);
"""

# Word forms: FTS5's Porter stemmer over the same tokenizer, so "replicas" finds
# "replica" and "vacuuming" finds "vacuum" (PostgreSQL's tsvector already stems).
V2_SQLITE = """
DROP TABLE IF EXISTS chunk_vocab;
DROP TABLE IF EXISTS chunk_fts;
CREATE VIRTUAL TABLE chunk_fts USING fts5(
    title, heading, text, content='chunks', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE chunk_vocab USING fts5vocab(chunk_fts, 'row');
INSERT INTO chunk_fts (chunk_fts) VALUES ('rebuild');
"""

# Whether a room's document was written from an encrypted room: 1 or 0, and NULL for
# the summaries of earlier releases (unknown: left out wherever encrypted ones are).
V3 = "ALTER TABLE documents ADD COLUMN encrypted INTEGER"

# The keyword index in each collection's language: on SQLite, an FTS5 table of stems
# written by the catalog (FTS5's tokenizers stem English only), filled again for every
# collection by `align_languages`; the language each collection is indexed in.
V4_SQLITE = """
DROP TRIGGER IF EXISTS chunks_ai;
DROP TRIGGER IF EXISTS chunks_ad;
DROP TABLE IF EXISTS chunk_vocab;
DROP TABLE IF EXISTS chunk_fts;
CREATE VIRTUAL TABLE chunk_fts USING fts5(
    title, heading, text, tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE chunk_vocab USING fts5vocab(chunk_fts, 'row');
CREATE TABLE keyword_languages (collection TEXT PRIMARY KEY, language TEXT NOT NULL);
"""
V4_POSTGRES = "CREATE TABLE keyword_languages (collection TEXT PRIMARY KEY, language TEXT NOT NULL)"
# Chunks indexed again per transaction when a collection changes language.
REINDEX_BATCH = 500

UPGRADES = UpgradeTable(
    "catalog",
    [
        Upgrade("documents, chunks, dates, keyword index", V1_SQLITE, V1_POSTGRES),
        Upgrade("keyword index with stemming", V2_SQLITE, "SELECT 1"),
        Upgrade("documents of encrypted rooms marked", V3, V3),
        Upgrade("keyword index in each collection's language", V4_SQLITE, V4_POSTGRES),
    ],
)

HIT_COLUMNS = (
    "c.chunk_id, c.collection, c.doc_id, d.source, c.title, d.url, c.heading, c.text,"
    " c.position, d.public, d.room, d.content_hash, d.encrypted"
)
# ts_rank's weights of the labels {D, C, B, A}: body 1, heading 1.5, title 2, as FTS5's
# bm25() weighs the columns; its normalization 1 divides by the log of the chunk's length
# (ts_rank's default, title 10 times the body and no length, ranked title-only matches of
# long chunks first: hit@1 of hybrid search 0.88 instead of 0.92 on tests/data/retrieval).
TS_WEIGHTS = "{0.5,0.5,0.75,1.0}"
# PostgreSQL's tsvector of a chunk: title over heading over body, like FTS5's weights.
TSVECTOR = (
    "setweight(to_tsvector(?::text::regconfig, title), 'A')"
    " || setweight(to_tsvector(?::text::regconfig, heading), 'B')"
    " || to_tsvector(?::text::regconfig, text)"
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
    # Written from an encrypted room (a room's summary); None: not known.
    encrypted: bool | None = False


@dataclass(frozen=True)
class ChunkRow:
    chunk_id: str
    position: int
    heading: str
    text: str


class Catalog(Protocol):
    async def document(self, collection: str, doc_id: str) -> DocumentRecord | None: ...
    async def replace_document(
        self, record: DocumentRecord, chunks: Iterable[ChunkRow], dates: tuple[float, float] | None
    ) -> None: ...
    async def delete_document(self, collection: str, doc_id: str) -> bool: ...
    async def collection_sizes(self) -> dict[str, tuple[int, int]]: ...
    async def keyword_search(self, text: str, filters: SearchFilters, limit: int) -> list[str]: ...
    async def current_chunks(
        self, chunk_ids: Sequence[str], filters: SearchFilters
    ) -> dict[str, Row]: ...
    async def chunks_at(
        self, collection: str, doc_id: str, positions: Sequence[int]
    ) -> list[Row]: ...
    async def documents_quoting(self, collection: str, room: str, needle: str) -> list[str]: ...
    async def room_documents_before(
        self, collection: str, room: str, cutoff: float
    ) -> list[str]: ...
    async def room_documents_covering(
        self, collection: str, room: str, moment: float
    ) -> list[str]: ...
    async def erase_freed(self) -> None: ...


def build_filter_sql(filters: SearchFilters, dialect: Dialect) -> tuple[str, list[Any]]:
    """SQL conditions on chunks `c` and documents `d`. On SQLite, the unary `+` keeps the
    planner from driving the query by the collection index (all chunks of a collection)
    instead of the chunk ids or the full-text match: 5 ms -> 0.3 ms at 10k chunks."""
    clauses: list[str] = []
    params: list[Any] = []

    def among(column: str, values: Sequence[Any]) -> None:
        clauses.append(f"{column} IN ({','.join('?' * len(values))})")
        params.extend(values)

    if filters.collections:
        among("+c.collection" if dialect == "sqlite" else "c.collection", filters.collections)
    if filters.sources:
        among("d.source", filters.sources)
    among("d.room", ("", *filters.rooms))
    for room, since in filters.rooms_since:
        clauses.append(
            "(d.room != ? OR EXISTS (SELECT 1 FROM document_dates dd WHERE dd.collection ="
            " d.collection AND dd.doc_id = d.doc_id AND dd.date_from >= ?))"
        )
        params += (room, since)
    if filters.documents:
        either = " OR ".join("(c.collection = ? AND c.doc_id = ?)" for _ in filters.documents)
        clauses.append(f"({either})")
        params += [part for document in filters.documents for part in document]
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


class SqlCatalog(SqlStore):
    """The catalog over either backend. Set after opening: `language_of` (a collection's
    language, from the live config; English by default) and `text_search_config`
    (PostgreSQL's configuration for English collections)."""

    upgrades = UPGRADES
    text_search_config = "english"
    language_of: Callable[[str], str] = staticmethod(lambda collection: ENGLISH)

    @classmethod
    async def open(cls, db: Database) -> Self:
        """The catalog on `db`, its keyword index complete (in English until
        `use_languages`)."""
        catalog = await super().open(db)
        await catalog.align_languages()
        return catalog

    async def use_languages(
        self, language_of: Callable[[str], str], text_search_config: str = "english"
    ) -> None:
        """Index in each collection's language from now on (`language_of` reads the live
        config), and index again those indexed in another."""
        self.language_of = language_of
        self.text_search_config = text_search_config
        await self.align_languages()

    def _postgres_config(self, collection: str) -> str:
        return postgres_config(self.language_of(collection), self.text_search_config)

    async def _index_keywords(self, tx: Database, collection: str, where: str, *params) -> None:
        """Write the keyword index of the collection's chunks that match `where`."""
        if tx.dialect == "postgres":
            config = self._postgres_config(collection)
            await tx.execute(
                f"UPDATE chunks SET search = {TSVECTOR} WHERE collection = ? AND {where}",
                config, config, config, collection, *params,
            )  # fmt: skip
            return
        language = self.language_of(collection)
        rows = await tx.fetch(
            f"SELECT rowid, title, heading, text FROM chunks WHERE collection = ? AND {where}",
            collection, *params,
        )  # fmt: skip
        await tx.execute(
            "DELETE FROM chunk_fts WHERE rowid IN"
            f" (SELECT rowid FROM chunks WHERE collection = ? AND {where})",
            collection, *params,
        )  # fmt: skip
        await tx.executemany(
            "INSERT INTO chunk_fts (rowid, title, heading, text) VALUES (?, ?, ?, ?)",
            [(rowid, *(build_index_text(part, language) for part in parts))
             for rowid, *parts in rows],
        )  # fmt: skip

    async def align_languages(self) -> list[str]:
        """Index again, once, the keyword side of each collection whose language is not
        the one it was indexed in (a changed `language`, or an index of an earlier
        release); the collections it did."""
        rows = await self.db.fetch("SELECT collection, language FROM keyword_languages")
        indexed = {collection: language for collection, language in rows}
        present = [row[0] for row in await self.db.fetch("SELECT DISTINCT collection FROM chunks")]
        done = []
        for collection in present:
            language = self.language_of(collection)
            if indexed.get(collection) == language:
                continue
            rowids = [row[0] for row in await self.db.fetch(
                "SELECT rowid FROM chunks WHERE collection = ? ORDER BY rowid", collection
            )]  # fmt: skip
            for start in range(0, len(rowids), REINDEX_BATCH):
                batch = rowids[start : start + REINDEX_BATCH]
                async with self.db.transaction() as tx:
                    await self._index_keywords(
                        tx, collection, "rowid BETWEEN ? AND ?", batch[0], batch[-1]
                    )
                await asyncio.sleep(0)  # answers go on meanwhile
            await self._record_language(self.db, collection, language)
            done.append(collection)
        return done

    @staticmethod
    async def _record_language(db: Database, collection: str, language: str) -> None:
        await db.execute(
            "INSERT INTO keyword_languages VALUES (?, ?)"
            " ON CONFLICT (collection) DO UPDATE SET language = excluded.language",
            collection, language,
        )  # fmt: skip

    async def document(self, collection: str, doc_id: str) -> DocumentRecord | None:
        row = await self.db.fetchrow(
            "SELECT * FROM documents WHERE collection = ? AND doc_id = ?", collection, doc_id
        )
        return DocumentRecord(*row) if row else None

    async def replace_document(
        self,
        record: DocumentRecord,
        chunks: Iterable[ChunkRow],
        dates: tuple[float, float] | None = None,
    ) -> None:
        """Swap in a document's new version, chunks and dates, all at once."""
        key = (record.collection, record.doc_id)
        async with self.db.transaction() as tx:
            await self._delete(tx, *key)
            await tx.executemany(
                "INSERT INTO chunks (chunk_id, collection, doc_id, position, title, heading, text)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(c.chunk_id, *key, c.position, record.title, c.heading, c.text) for c in chunks],
            )
            await self._index_keywords(tx, record.collection, "doc_id = ?", record.doc_id)
            if not await tx.fetchval(
                "SELECT 1 FROM keyword_languages WHERE collection = ?", record.collection
            ):
                await self._record_language(tx, record.collection, self.language_of(key[0]))
            values = list(astuple(record))
            values[8] = int(record.public)
            values[12] = None if record.encrypted is None else int(record.encrypted)
            await tx.execute(
                "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", *values
            )
            if dates is not None:
                await tx.execute("INSERT INTO document_dates VALUES (?, ?, ?, ?)", *key, *dates)

    @staticmethod
    async def _delete(tx: Database, collection: str, doc_id: str) -> bool:
        if tx.dialect == "sqlite":
            await tx.execute(
                "DELETE FROM chunk_fts WHERE rowid IN"
                " (SELECT rowid FROM chunks WHERE collection = ? AND doc_id = ?)",
                collection, doc_id,
            )  # fmt: skip
        for table in ("chunks", "document_dates"):
            await tx.execute(
                f"DELETE FROM {table} WHERE collection = ? AND doc_id = ?", collection, doc_id
            )
        deleted = await tx.execute(
            "DELETE FROM documents WHERE collection = ? AND doc_id = ?", collection, doc_id
        )
        return deleted > 0

    async def delete_document(self, collection: str, doc_id: str) -> bool:
        async with self.db.transaction() as tx:
            return await self._delete(tx, collection, doc_id)

    async def collection_sizes(self) -> dict[str, tuple[int, int]]:
        """Documents and chunks per collection."""
        rows = await self.db.fetch(
            "SELECT collection, COUNT(*), COALESCE(SUM(chunk_count), 0)"
            " FROM documents GROUP BY collection"
        )
        return {name: (int(documents), int(chunks)) for name, documents, chunks in rows}

    async def _word_frequencies(self, stems: list[str]) -> tuple[dict[str, int], int]:
        """How many chunks hold each stem, and (an upper bound of) how many chunks there
        are. Only FTS5 keeps these at hand; PostgreSQL's GIN index needs no pruning."""
        if not stems or self.db.dialect != "sqlite":
            return {}, 0
        rows = await self.db.fetch(
            f"SELECT term, doc FROM chunk_vocab WHERE term IN ({','.join('?' * len(stems))})",
            *stems,
        )
        chunks = await self.db.fetchval("SELECT COALESCE(MAX(rowid), 0) FROM chunks")
        return {term: int(count) for term, count in rows}, int(chunks)

    async def keyword_search(self, text: str, filters: SearchFilters, limit: int) -> list[str]:
        """Chunk ids ranked by keyword relevance (title and heading count more than body),
        the words read in each searched collection's language."""
        names = filters.collections or tuple(
            row[0] for row in await self.db.fetch("SELECT DISTINCT collection FROM documents")
        )
        by_language: dict[str, list[str]] = {}
        for name in names:
            by_language.setdefault(self.language_of(name), []).append(name)
        scored: list[tuple[float, str]] = []
        for language, collections in by_language.items():
            within = replace(filters, collections=tuple(collections))
            scored += await self._keyword_search_in(text, language, within, limit)
        if len(by_language) > 1:
            scored.sort(key=lambda found: found[0], reverse=True)
        return [chunk_id for _, chunk_id in scored[:limit]]

    async def _keyword_search_in(
        self, text: str, language: str, filters: SearchFilters, limit: int
    ) -> list[tuple[float, str]]:
        """(score, chunk id), best first, among collections of one language."""
        words = parse_query_words(text, language)
        where, params = build_filter_sql(filters, self.db.dialect)
        if self.db.dialect == "sqlite":
            stems = parse_query_stems(text, language)
            selective = decide_selective_words(stems, *await self._word_frequencies(stems))
            if not selective:
                return []
            rows = await self.db.fetch(
                "SELECT -bm25(chunk_fts, 2.0, 1.5, 1.0) AS score, c.chunk_id FROM chunk_fts"
                " JOIN chunks c ON c.rowid = chunk_fts.rowid"
                " JOIN documents d ON d.collection = c.collection AND d.doc_id = c.doc_id"
                f" WHERE chunk_fts MATCH ? AND {where}"
                " ORDER BY score DESC LIMIT ?",
                build_match_query(selective), *params, limit,
            )  # fmt: skip
        else:
            if not words:
                return []
            rows = await self.db.fetch(
                f"SELECT ts_rank('{TS_WEIGHTS}', c.search, query, 1) AS score, c.chunk_id"
                " FROM chunks c"
                " JOIN documents d ON d.collection = c.collection AND d.doc_id = c.doc_id,"
                " to_tsquery(?::text::regconfig, ?) query"
                f" WHERE c.search @@ query AND {where}"
                " ORDER BY score DESC, c.rowid LIMIT ?",
                postgres_config(language, self.text_search_config),
                build_tsquery(words), *params, limit,
            )  # fmt: skip
        return [(float(score), chunk_id) for score, chunk_id in rows]

    async def room_documents_before(self, collection: str, room: str, cutoff: float) -> list[str]:
        """The ids of the room's dated documents in the collection that end before
        `cutoff` (summaries past the room's retention)."""
        rows = await self.db.fetch(
            "SELECT d.doc_id FROM documents d JOIN document_dates dd"
            " ON dd.collection = d.collection AND dd.doc_id = d.doc_id"
            " WHERE d.collection = ? AND d.room = ? AND dd.date_to < ?",
            collection, room, cutoff,
        )  # fmt: skip
        return [row[0] for row in rows]

    async def room_documents_covering(self, collection: str, room: str, moment: float) -> list[str]:
        """The ids of the room's dated documents in the collection whose period holds
        `moment` (the summaries of when a message was said)."""
        rows = await self.db.fetch(
            "SELECT d.doc_id FROM documents d JOIN document_dates dd"
            " ON dd.collection = d.collection AND dd.doc_id = d.doc_id"
            " WHERE d.collection = ? AND d.room = ? AND dd.date_from <= ? AND dd.date_to >= ?",
            collection, room, moment, moment,
        )  # fmt: skip
        return [row[0] for row in rows]

    async def documents_quoting(self, collection: str, room: str, needle: str) -> list[str]:
        """The ids of the room's documents in the collection whose text holds `needle`
        (a summary that links to a message)."""
        holds = "instr(c.text, ?) > 0" if self.db.dialect == "sqlite" else "strpos(c.text, ?) > 0"
        rows = await self.db.fetch(
            "SELECT DISTINCT c.doc_id FROM chunks c JOIN documents d"
            " ON d.collection = c.collection AND d.doc_id = c.doc_id"
            f" WHERE c.collection = ? AND d.room = ? AND {holds}",
            collection, room, needle,
        )  # fmt: skip
        return [row[0] for row in rows]

    async def chunks_at(self, collection: str, doc_id: str, positions: Sequence[int]) -> list[Row]:
        """Rows (see HIT_COLUMNS) of the document's current chunks at these positions."""
        if not positions:
            return []
        return await self.db.fetch(
            f"SELECT {HIT_COLUMNS} FROM chunks c"
            " JOIN documents d ON d.collection = c.collection AND d.doc_id = c.doc_id"
            f" WHERE c.collection = ? AND c.doc_id = ? AND c.position IN"
            f" ({','.join('?' * len(positions))})",
            collection, doc_id, *positions,
        )  # fmt: skip

    async def current_chunks(
        self, chunk_ids: Sequence[str], filters: SearchFilters
    ) -> dict[str, Row]:
        """Rows (see HIT_COLUMNS) of the ids that are current and pass the filters."""
        if not chunk_ids:
            return {}
        where, params = build_filter_sql(filters, self.db.dialect)
        rows = await self.db.fetch(
            f"SELECT {HIT_COLUMNS} FROM chunks c"
            " JOIN documents d ON d.collection = c.collection AND d.doc_id = c.doc_id"
            f" WHERE c.chunk_id IN ({','.join('?' * len(chunk_ids))}) AND {where}",
            *chunk_ids, *params,
        )  # fmt: skip
        return {row[0]: row for row in rows}
