"""Scores of one question's result (pure): retrieval against expected documents,
coverage of an expected answer, citations, refusals."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sacrebleu.metrics import CHRF
from spacy.lang.en.stop_words import STOP_WORDS

WORD = re.compile(r"[a-z0-9]+")
_CHRF = CHRF()


def hit_at(ranked: Sequence[str], expected: Sequence[str], k: int) -> float:
    """1 if any expected document is among the first k retrieved."""
    return float(bool(set(ranked[:k]) & set(expected)))


def recall_at(ranked: Sequence[str], expected: Sequence[str], k: int) -> float:
    """The share of expected documents among the first k retrieved."""
    return len(set(ranked[:k]) & set(expected)) / len(set(expected)) if expected else 0.0


def reciprocal_rank(ranked: Sequence[str], expected: Sequence[str]) -> float:
    for rank, document in enumerate(ranked, start=1):
        if document in expected:
            return 1 / rank
    return 0.0


def _content_words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOP_WORDS}


def token_recall(expected_answer: str, text: str) -> float:
    """How much of the expected answer's content words `text` contains."""
    wanted = _content_words(expected_answer)
    return len(wanted & _content_words(text)) / len(wanted) if wanted else 0.0


def chrf(answer: str, expected_answer: str) -> float:
    """chrF (0-1) of the answer against the expected one."""
    return _CHRF.sentence_score(answer, [expected_answer]).score / 100


def citation_validity(cited: Sequence[str], retrieved: Sequence[str]) -> float:
    """The share of cited documents that the question's retrieval returned (1 with no
    citation: nothing invalid was claimed)."""
    return sum(doc in retrieved for doc in cited) / len(cited) if cited else 1.0


def score_result(
    *,
    ranked: Sequence[str],
    context: str,
    answer: str,
    cited: Sequence[str],
    refused: bool,
    expected_ids: Sequence[str] = (),
    expected_answer: str = "",
    ks: Sequence[int] = (1, 3, 5),
) -> dict[str, float]:
    """Every score that the question's labels allow."""
    scores = {"refused": float(refused), "citation_validity": citation_validity(cited, ranked)}
    if expected_ids:
        for k in ks:
            scores[f"hit@{k}"] = hit_at(ranked, expected_ids, k)
            scores[f"recall@{k}"] = recall_at(ranked, expected_ids, k)
        scores["mrr"] = reciprocal_rank(ranked, expected_ids)
        if cited:
            scores["citation_precision"] = sum(d in expected_ids for d in cited) / len(cited)
    if expected_answer:
        scores["context_token_recall"] = token_recall(expected_answer, context)
        scores["answer_token_recall"] = token_recall(expected_answer, answer)
        scores["answer_chrf"] = chrf(answer, expected_answer)
    return scores


def average(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """The mean of each score over the questions that have it."""
    keys = sorted({key for row in rows for key in row})
    return {
        key: sum(row[key] for row in rows if key in row) / sum(key in row for row in rows)
        for key in keys
    }
