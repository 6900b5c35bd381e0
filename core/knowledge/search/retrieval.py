"""Hybrid search: vector similarity and BM25 keyword search, fused by weighted reciprocal rank.

A question in another language than a collection's is also searched in the collection's
language (`translations`, written by the pre-step): the embedding model and the
stemmers know one language each, so the translation is what finds the passages, and the
question as asked still finds what it names verbatim (a setting, an error code).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace

from core.config import Settings
from core.i18n.detection import LanguageFinder
from core.knowledge.documents import Hit, SearchFilters
from core.knowledge.search.across import decide_across_languages
from core.knowledge.search.catalog import Catalog
from core.knowledge.search.embedding import Embedders, calibrate
from core.knowledge.search.vectors import VectorStore
from core.storage.database import Row

Ranking = tuple[Sequence[str], float]
NO_FILTERS = SearchFilters()
# (collection, document id) -> a factor for its chunks' scores (feedback on answers).
Adjustments = Callable[[], Awaitable[Mapping[tuple[str, str], float]]]


def fuse_by_rank(rankings: Sequence[Ranking], k: int) -> list[tuple[str, float]]:
    """Weighted reciprocal rank fusion: score(id) = sum of weight / (k + rank), rank from 1."""
    scores: dict[str, float] = {}
    for ids, weight in rankings:
        for rank, chunk_id in enumerate(ids, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: item[1], reverse=True)


def merge_by_best_rank(rankings: Sequence[Sequence[str]]) -> list[str]:
    """One ranking of several: each id at the best rank it has in any (ties in order)."""
    best: dict[str, tuple[int, int]] = {}
    for order, ids in enumerate(rankings):
        for rank, chunk_id in enumerate(ids):
            best[chunk_id] = min(best.get(chunk_id, (rank, order)), (rank, order))
    return sorted(best, key=lambda chunk_id: best[chunk_id])


def decide_queries(
    query: str, translations: Mapping[str, str], languages: Mapping[str, str]
) -> list[tuple[str, tuple[str, ...]]]:
    """(text, collections) to search: the query in every collection, and each translation
    in the collections of its language (one that only repeats the query is left out)."""
    searches = [(query, tuple(languages))]
    for language, text in translations.items():
        collections = tuple(name for name, lang in languages.items() if lang == language)
        if collections and text.strip() and text.strip().casefold() != query.strip().casefold():
            searches.append((text, collections))
    return searches


def build_hit(row: Row, public: bool) -> Hit:
    """A catalog row (see HIT_COLUMNS) as a hit, before any search scored it."""
    chunk_id, collection, doc_id, source, title, url, heading, text, position, _, room, rev, enc = (
        row
    )
    return Hit(
        chunk_id,
        collection,
        doc_id,
        source,
        title,
        url,
        heading,
        text,
        position,
        public,
        0.0,
        room=room,
        revision=rev,
        encrypted=None if enc is None else bool(enc),
    )


async def _none() -> list[str]:
    return []


async def _no_hits() -> list[tuple[str, float]]:
    return []


class Retriever:
    def __init__(
        self,
        catalog: Catalog,
        vectors: VectorStore,
        embedders: Embedders,
        settings: Callable[[], Settings],
        adjustments: Adjustments | None = None,
    ) -> None:
        self.catalog = catalog
        self.vectors = vectors
        self.embedders = embedders
        self.settings = settings
        self.adjustments = adjustments
        # The question's own language, for the distances' anchors (the bot loads the
        # detector before it takes the lease; elsewhere, at the first question).
        self.languages = LanguageFinder()

    def _collections(self, filters: SearchFilters) -> dict[str, str]:
        """The searched collections and their models. A collection has one source, so the
        `sources` filter and `public_only` choose collections."""
        settings = self.settings()
        names = filters.collections or tuple(settings.collections)
        chosen = {}
        for name in names:
            collection = settings.collections.get(name)
            wanted_source = not filters.sources or (
                collection and collection.source in filters.sources
            )
            if collection and wanted_source and (collection.public or not filters.public_only):
                chosen[name] = settings.embedding_model_of(name)
        return chosen

    async def vector_ranking(
        self, query: str, collections: dict[str, str], n: int
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine distance on the reference scale), nearest first: each model's
        distances are calibrated (core/knowledge/search/embedding.py), so that collections
        of two models rank together and the thresholds of [retrieval] hold for both; a
        question in another language than a collection's is read on the model's anchors
        for that (`decide_across_languages`: its script, or its detected language)."""
        hits: list[tuple[str, float]] = []
        detected: list[str | None] = []  # detected once, and only for a model with two pairs
        for model in set(collections.values()):
            embedder = await asyncio.to_thread(self.embedders.get, model)
            vector = (await embedder.embed_queries([query]))[0]
            names = [name for name, m in collections.items() if m == model]
            searched = await asyncio.gather(
                *(asyncio.to_thread(self.vectors.query, name, model, vector, n) for name in names)
            )
            for name, found in zip(names, searched, strict=True):
                anchors = embedder.calibration
                if anchors.across is not None:
                    if not detected:
                        detected.append(await asyncio.to_thread(self.languages.find_sure, query))
                    language = self.settings().language_of(name)
                    anchors = anchors.of(decide_across_languages(query, language, detected[0]))
                hits += [(chunk, calibrate(far, anchors)) for chunk, far in found]
        return sorted(hits, key=lambda hit: hit[1])[:n]

    async def keyword_ranking(self, query: str, filters: SearchFilters, n: int) -> list[str]:
        return await self.catalog.keyword_search(query, filters, n)

    async def search(
        self,
        query: str,
        filters: SearchFilters = NO_FILTERS,
        *,
        k: int | None = None,
        overfetch: float = 1.0,
        mode: str = "hybrid",
        translations: Mapping[str, str] | None = None,
    ) -> list[Hit]:
        """The best chunks for `query`; `overfetch` > 1 returns more, for later filtering.

        `mode` is "hybrid", "vector" or "keyword" (the single ones are for evaluation);
        `translations` are the query in other languages (language code -> text).
        """
        settings = self.settings().retrieval
        want = max(1, round((k or settings.top_k) * overfetch))
        n = max(settings.candidates, want)
        collections = self._collections(filters)
        if not collections:
            return []
        filters = replace(filters, collections=tuple(collections))
        languages = {name: self.settings().language_of(name) for name in collections}
        searches = decide_queries(query, translations or {}, languages)
        found = await asyncio.gather(
            *(
                asyncio.gather(
                    self.vector_ranking(text, {name: collections[name] for name in names}, n)
                    if mode != "keyword"
                    else _no_hits(),
                    self.keyword_ranking(text, replace(filters, collections=names), n)
                    if mode != "vector"
                    else _none(),
                )
                for text, names in searches
            )
        )
        # Each side ranked once over all the searches (the nearest distance, the best
        # rank), so that a chunk the translation finds too does not count twice.
        distance: dict[str, float] = {}
        for vector_hits, _ in found:
            for chunk_id, far in vector_hits:
                distance[chunk_id] = min(far, distance.get(chunk_id, far))
        vector_ids = sorted(distance, key=lambda chunk_id: distance[chunk_id])[:n]
        keyword_ids = merge_by_best_rank([keyword_found for _, keyword_found in found])[:n]
        fused = fuse_by_rank(
            [(vector_ids, settings.vector_weight), (keyword_ids, settings.keyword_weight)],
            settings.rrf_k,
        )
        rows = await self.catalog.current_chunks([chunk_id for chunk_id, _ in fused], filters)
        factors = await self.adjustments() if self.adjustments else {}
        vector_rank = {chunk_id: rank for rank, chunk_id in enumerate(vector_ids, start=1)}
        keyword_rank = {chunk_id: rank for rank, chunk_id in enumerate(keyword_ids, start=1)}
        hits = []
        for chunk_id, score in fused:
            row = rows.get(chunk_id)
            # Nearest neighbours always exist: a chunk only the vector side found must be
            # near enough to count as relevant, so that "nothing found" can be said.
            far = distance.get(chunk_id, 0.0) > settings.max_distance
            if row is None or (far and chunk_id not in keyword_rank):
                continue
            collection, doc_id = row[1], row[2]
            public = self.settings().collections[collection].public
            hits.append(
                replace(
                    build_hit(row, public),
                    score=score * factors.get((collection, doc_id), 1.0),
                    vector_rank=vector_rank.get(chunk_id),
                    keyword_rank=keyword_rank.get(chunk_id),
                    distance=distance.get(chunk_id),
                )
            )
        return sorted(hits, key=lambda hit: hit.score, reverse=True)[:want]
