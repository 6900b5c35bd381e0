"""The catalog: which version of each document is current, and its chunks' text.

It is the source of truth for what readers see: a document's chunks are swapped in one
transaction, and Chroma only proposes candidate chunk ids, so chunks of a replaced or
half-written version are never returned. The chunks' text is indexed for the keyword
side of hybrid search in each collection's language (core/knowledge/search/keyword_index.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass
from typing import Protocol

from core.knowledge.documents import SearchFilters
from core.knowledge.search.filter_sql import build_filter_sql
from core.knowledge.search.keyword_index import KeywordIndex
from core.storage.database import Database, Row
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
    async def chunks_of(self, collection: str, after: str, limit: int) -> list[Row]: ...


class SqlCatalog(KeywordIndex):
    """The catalog over either backend; its keyword side is KeywordIndex's."""

    upgrades = UPGRADES

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
                collection,
                doc_id,
            )
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

    async def room_documents_before(self, collection: str, room: str, cutoff: float) -> list[str]:
        """The ids of the room's dated documents in the collection that end before
        `cutoff` (summaries past the room's retention)."""
        rows = await self.db.fetch(
            "SELECT d.doc_id FROM documents d JOIN document_dates dd"
            " ON dd.collection = d.collection AND dd.doc_id = d.doc_id"
            " WHERE d.collection = ? AND d.room = ? AND dd.date_to < ?",
            collection,
            room,
            cutoff,
        )
        return [row[0] for row in rows]

    async def room_documents_covering(self, collection: str, room: str, moment: float) -> list[str]:
        """The ids of the room's dated documents in the collection whose period holds
        `moment` (the summaries of when a message was said)."""
        rows = await self.db.fetch(
            "SELECT d.doc_id FROM documents d JOIN document_dates dd"
            " ON dd.collection = d.collection AND dd.doc_id = d.doc_id"
            " WHERE d.collection = ? AND d.room = ? AND dd.date_from <= ? AND dd.date_to >= ?",
            collection,
            room,
            moment,
            moment,
        )
        return [row[0] for row in rows]

    async def documents_quoting(self, collection: str, room: str, needle: str) -> list[str]:
        """The ids of the room's documents in the collection whose text holds `needle`
        (a summary that links to a message)."""
        holds = "instr(c.text, ?) > 0" if self.db.dialect == "sqlite" else "strpos(c.text, ?) > 0"
        rows = await self.db.fetch(
            "SELECT DISTINCT c.doc_id FROM chunks c JOIN documents d"
            " ON d.collection = c.collection AND d.doc_id = c.doc_id"
            f" WHERE c.collection = ? AND d.room = ? AND {holds}",
            collection,
            room,
            needle,
        )
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
            collection,
            doc_id,
            *positions,
        )

    async def chunks_of(self, collection: str, after: str, limit: int) -> list[Row]:
        """The collection's current chunks after the chunk id `after`, in id order, as
        (chunk id, position, title, heading, text, doc id, source, url, language,
        version, room, public, content hash, updated at)."""
        return await self.db.fetch(
            "SELECT c.chunk_id, c.position, c.title, c.heading, c.text, d.doc_id, d.source,"
            " d.url, d.language, d.version, d.room, d.public, d.content_hash, d.updated_at"
            " FROM chunks c JOIN documents d ON d.collection = c.collection"
            " AND d.doc_id = c.doc_id WHERE c.collection = ? AND c.chunk_id > ?"
            " ORDER BY c.chunk_id LIMIT ?",
            collection,
            after,
            limit,
        )

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
            *chunk_ids,
            *params,
        )
        return {row[0]: row for row in rows}
