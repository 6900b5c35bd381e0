"""A collection whose `embedding_model` changed is embedded again, once, from the chunks the
catalog holds (as a collection whose `language` changed is keyword-indexed again).

Chroma's collection is emptied and marked partial first; a process that stops midway
starts over at its next start. Meanwhile the keyword side still finds the collection's
chunks, and the vector side finds those already embedded. The chunks keep their sizes:
a document is cut to the new model's size when it is next put.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from core.config import Settings
from core.knowledge.documents import Chunk
from core.knowledge.ingest.indexer import build_vector_metadata
from core.knowledge.search.catalog import Catalog
from core.knowledge.search.embedding import Embedders
from core.knowledge.search.vectors import VectorStore

log = logging.getLogger(__name__)

# Chunks embedded and written together.
BATCH = 256


def decide_realign(recorded: tuple[str, bool] | None, model: str, has_chunks: bool) -> bool:
    """Whether a collection's vectors must be made again: Chroma holds them from another
    model, an earlier realignment stopped midway, or Chroma holds none (`recorded` None)
    while the catalog has chunks (Chroma's data lost, or a switch stopped between
    emptying the collection and making it again)."""
    if recorded is None:
        return has_chunks
    return recorded != (model, True)


async def realign_models(
    catalog: Catalog,
    vectors: VectorStore,
    embedders: Embedders,
    settings: Callable[[], Settings],
) -> dict[str, int]:
    """Embed again each collection whose vectors are not the configured model's; the
    chunks embedded per collection."""
    done: dict[str, int] = {}
    for name in list(settings().collections):
        model = settings().embedding_model_of(name)
        recorded = await asyncio.to_thread(vectors.recorded_model, name)
        has_chunks = bool(await catalog.chunks_of(name, "", 1))
        if not decide_realign(recorded, model, has_chunks):
            continue
        # Loaded (and, for an endpoint, reachable) before anything is emptied.
        embedder = await asyncio.to_thread(embedders.get, model)
        await embedder.embed_passages(["probe"])
        started = time.monotonic()
        log.info("collection %s: embedding its chunks again with %s", name, model)
        await asyncio.to_thread(vectors.start_model, name, model)
        count, after = 0, ""
        while rows := await catalog.chunks_of(name, after, BATCH):
            texts = [Chunk(row[1], row[4], row[3], 0).embedding_text(row[2]) for row in rows]
            embedded = await embedder.embed_passages(texts)
            metadatas = [
                {
                    **build_vector_metadata(
                        name,
                        doc_id,
                        source,
                        title,
                        url,
                        language,
                        version,
                        room,
                        bool(public),
                        content_hash,
                        updated_at,
                    ),
                    "position": position,
                    "heading": heading,
                }
                for (
                    _,
                    position,
                    title,
                    heading,
                    _,
                    doc_id,
                    source,
                    url,
                    language,
                    version,
                    room,
                    public,
                    content_hash,
                    updated_at,
                ) in rows
            ]
            ids = [row[0] for row in rows]
            await asyncio.to_thread(vectors.upsert, name, model, ids, embedded, metadatas)
            count, after = count + len(rows), rows[-1][0]
        await asyncio.to_thread(vectors.finish_model, name, model)
        log.info(
            "collection %s: %d chunks embedded again in %.1f s",
            name,
            count,
            time.monotonic() - started,
        )
        done[name] = count
    return done
