"""The keyword side of hybrid search, in each collection's language: on SQLite an FTS5
table of the chunks' Snowball stems (written here: FTS5's tokenizers stem English only)
ranked by `bm25()`, on PostgreSQL a `tsvector` of the language's text search
configuration ranked by `ts_rank()` (docs/operations/storage.md says how the two
differ). A collection indexed in another language (or before languages) is indexed
again once, when the process starts (`align_languages`). The words themselves:
core/knowledge/search/keywords.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Self

from core.knowledge.documents import SearchFilters
from core.knowledge.search.filter_sql import build_filter_sql
from core.knowledge.search.keywords import (
    ENGLISH,
    build_index_text,
    build_match_query,
    build_tsquery,
    decide_selective_words,
    parse_query_stems,
    parse_query_words,
    postgres_config,
)
from core.storage.database import Database
from core.storage.store import SqlStore

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


# Chunks indexed again per transaction when a collection changes language.
REINDEX_BATCH = 500


class KeywordIndex(SqlStore):
    """The catalog's keyword index: each collection in its language (`language_of`;
    English by default), English ones with PostgreSQL's `text_search_config`."""

    text_search_config = "english"
    language_of: Callable[[str], str] = staticmethod(lambda collection: ENGLISH)

    @classmethod
    async def open(
        cls,
        db: Database,
        language_of: Callable[[str], str] | None = None,
        text_search_config: str = "english",
    ) -> Self:
        """The catalog on `db`, each collection's keyword index in its language (indexed
        again first where it was indexed in another)."""
        catalog = await super().open(db)
        if language_of is not None:
            catalog.language_of = language_of
        catalog.text_search_config = text_search_config
        await catalog.align_languages()
        return catalog

    def _postgres_config(self, collection: str) -> str:
        return postgres_config(self.language_of(collection), self.text_search_config)

    async def _index_keywords(self, tx: Database, collection: str, where: str, *params) -> None:
        """Write the keyword index of the collection's chunks that match `where`."""
        if tx.dialect == "postgres":
            config = self._postgres_config(collection)
            await tx.execute(
                f"UPDATE chunks SET search = {TSVECTOR} WHERE collection = ? AND {where}",
                config,
                config,
                config,
                collection,
                *params,
            )
            return
        language = self.language_of(collection)
        rows = await tx.fetch(
            f"SELECT rowid, title, heading, text FROM chunks WHERE collection = ? AND {where}",
            collection,
            *params,
        )
        await tx.execute(
            "DELETE FROM chunk_fts WHERE rowid IN"
            f" (SELECT rowid FROM chunks WHERE collection = ? AND {where})",
            collection,
            *params,
        )
        await tx.executemany(
            "INSERT INTO chunk_fts (rowid, title, heading, text) VALUES (?, ?, ?, ?)",
            [
                (rowid, *(build_index_text(part, language) for part in parts))
                for rowid, *parts in rows
            ],
        )

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
            rowids = [
                row[0]
                for row in await self.db.fetch(
                    "SELECT rowid FROM chunks WHERE collection = ? ORDER BY rowid", collection
                )
            ]
            for start in range(0, len(rowids), REINDEX_BATCH):
                batch = rowids[start : start + REINDEX_BATCH]
                async with self.db.transaction() as tx:
                    await self._index_keywords(
                        tx, collection, "rowid BETWEEN ? AND ?", batch[0], batch[-1]
                    )
                await asyncio.sleep(0)  # the ingestion API, already serving, goes on
            await self._record_language(self.db, collection, language)
            done.append(collection)
        return done

    @staticmethod
    async def _record_language(db: Database, collection: str, language: str) -> None:
        await db.execute(
            "INSERT INTO keyword_languages VALUES (?, ?)"
            " ON CONFLICT (collection) DO UPDATE SET language = excluded.language",
            collection,
            language,
        )

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
                build_match_query(selective),
                *params,
                limit,
            )
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
                build_tsquery(words),
                *params,
                limit,
            )
        return [(float(score), chunk_id) for score, chunk_id in rows]
