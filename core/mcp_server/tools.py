"""The knowledge behind the MCP tools: search, fetch and the list of collections, each
bounded by the caller's reader exactly as answers are bounded by their readers.

Every document that is not public is checked with the source application that owns it,
for this reader, before anything of it (its text, title, link, or that it exists) is
returned; an application that cannot be reached denies (core/rights/checker.py). Rooms'
own knowledge (shared files, summaries, history, memories, the ledger) is never
reachable: searches name no room, and the rooms' collections are left out.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from core import strings
from core.chat_api.tokens import Caller
from core.config import Settings
from core.knowledge.documents import Hit, SearchFilters, build_place
from core.knowledge.search.retrieval import build_hit
from core.knowledge.search.vectors import KnowledgeUnavailable
from core.knowledge_base.base import KnowledgeBase
from core.mcp_server.shapes import (
    CollectionInfo,
    Collections,
    DocumentText,
    Passage,
    Refusal,
    SearchResults,
    build_citation_key,
    decide_collections,
    decide_limit,
    decide_requested,
    join_chunks,
    parse_citation_key,
)
from core.rights.readers import Audience

log = logging.getLogger(__name__)
# Retrieve more than asked, so that `limit` passages remain when rights deny some.
OVERFETCH = 3
UNCHECKED = (
    "Some documents could not be checked with the application that owns them just now, "
    "so they were left out; try again later."
)


def build_caller_audience(caller: Caller) -> Audience:
    """The caller's reader alone (as in a direct chat); no reader: public documents only."""
    if caller.reader is None:
        return Audience((), (), "an MCP caller with no reader: public documents only")
    return Audience((caller.reader,), (), "an MCP caller's own rights")


def _not_found(key: str) -> Refusal:
    # The same words whether the document does not exist or the caller may not read it.
    return Refusal(f"There is no document '{key}' that you may read.")


class KnowledgeTools:
    def __init__(self, kb: KnowledgeBase, settings: Callable[[], Settings]) -> None:
        self.kb = kb
        self.settings = settings

    def searchable(self, caller: Caller) -> list[str]:
        settings = self.settings()
        rooms = [
            name for name in (settings.files.collection, settings.summaries.collection) if name
        ]
        return decide_collections(
            settings.collections, settings.mcp.collections, rooms, caller.reader is None
        )

    def list_collections(self, caller: Caller) -> Collections:
        settings = self.settings()
        return Collections(
            collections=[
                CollectionInfo(
                    name=name,
                    description=settings.collections[name].description,
                    language=settings.collections[name].language,
                    public=settings.collections[name].public,
                )
                for name in self.searchable(caller)
            ]
        )

    async def search(
        self, caller: Caller, query: str, collections: Sequence[str] | None, limit: int
    ) -> SearchResults:
        if not query.strip():
            raise Refusal("Give the search some words to look for.")
        settings = self.settings()
        names = decide_requested(collections, self.searchable(caller))
        k = decide_limit(limit, settings.mcp.max_results)
        if not names:
            return SearchResults(passages=[])
        audience = build_caller_audience(caller)
        # Rooms' documents are left out: `rooms` is empty (SearchFilters).
        filters = SearchFilters(collections=tuple(names), public_only=audience.public_only)
        started = time.perf_counter()
        try:
            found = await self.kb.retriever.search(query, filters, k=k, overfetch=OVERFETCH)
        except KnowledgeUnavailable:
            raise Refusal(str(strings.SEARCH_UNAVAILABLE)) from None
        outcome = await self.kb.rights.filter(found, audience)
        passages = [_passage(hit) for hit in outcome.allowed[:k]]
        log.info(
            "MCP search by %s: %d passages (%.2f s)",
            caller.name,
            len(passages),
            time.perf_counter() - started,
        )
        return SearchResults(passages=passages, notice=UNCHECKED if outcome.unchecked else "")

    async def fetch(self, caller: Caller, key: str) -> DocumentText:
        collection, document_id = parse_citation_key(key)
        if collection not in self.searchable(caller):
            raise _not_found(key)
        settings = self.settings()
        record = await self.kb.catalog.document(collection, document_id)
        if record is None or record.room:
            raise _not_found(key)
        rows = await self.kb.catalog.chunks_at(collection, document_id, range(record.chunk_count))
        public = settings.collections[collection].public
        hits = sorted((build_hit(row, public) for row in rows), key=lambda h: h.position)
        if not hits:
            raise _not_found(key)
        # The whole document is one decision at its application (the check is per
        # document), asked for the first passage.
        outcome = await self.kb.rights.filter(hits[:1], build_caller_audience(caller))
        if not outcome.allowed:
            if outcome.unchecked:
                raise Refusal(UNCHECKED)
            raise _not_found(key)
        text = join_chunks([hit.text for hit in hits])
        most = settings.mcp.max_document_chars
        log.info("MCP fetch by %s: %d characters", caller.name, len(text))
        return DocumentText(
            id=key,
            collection=collection,
            document_id=document_id,
            title=record.title,
            url=record.url,
            text=text[:most],
            truncated=len(text) > most,
        )


def _passage(hit: Hit) -> Passage:
    return Passage(
        id=build_citation_key(hit.collection, hit.document_id),
        collection=hit.collection,
        document_id=hit.document_id,
        title=hit.title,
        url=hit.url,
        section=build_place(hit.title, hit.heading),
        text=hit.text,
    )
