"""On a small labelled set, hybrid retrieval finds the right document more often than either
of its halves. Fails when hybrid stops winning (a change of fusion, weights or tokenization)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.knowledge.parse.files import read_documents

DATA = Path(__file__).resolve().parents[1] / "data" / "retrieval"


def questions() -> list[dict]:
    return [json.loads(line) for line in (DATA / "questions.jsonl").read_text().splitlines()]


async def hit_at_k(kb, k: int, mode: str) -> float:
    found = 0
    for question in questions():
        hits = await kb.retriever.search(question["question"], k=k, mode=mode)
        found += bool({h.document_id for h in hits} & set(question["expected_ids"]))
    return found / len(questions())


@pytest.mark.parametrize("kb", ["embedded"], indirect=True)
async def test_hybrid_beats_vector_only_and_keyword_only(kb):
    documents = list(read_documents([DATA / "documents.jsonl"], "handbook"))
    await kb.indexer.put_many(documents)
    postgres = kb.catalog.db.dialect == "postgres"
    for k in (1, 3):
        scores = {mode: await hit_at_k(kb, k, mode) for mode in ("vector", "keyword", "hybrid")}
        print(f"hit@{k}: " + ", ".join(f"{mode} {score:.2f}" for mode, score in scores.items()))
        assert scores["hybrid"] > scores["keyword"], scores
        if postgres:
            # ts_rank has no inverse document frequency and stems words: on these 26
            # documents, hybrid ties vector search at hit@1 (0.92; SQLite's BM25: 0.96).
            assert scores["hybrid"] >= scores["vector"], scores
        else:
            assert scores["hybrid"] > scores["vector"], scores
