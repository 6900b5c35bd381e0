"""Retrieval measured on its own, without a model: for each question and search mode,
where the expected pages rank (hit@5, MRR), how many of the expected facts reach the
model's context at a budget (context recall), and whether a search-only answer would
show passages or say that nothing was found.

Context is chosen two ways: `top-k` (the best `retrieval.top_k` chunks that fit, as
releases before structure-aware context did) and `filled` (the budget filled, with
neighbours merged: what the pipeline does now), so that both can be reported.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from core.config import Settings
from core.evaluation.questions import Question
from core.evaluation.scores import hit_at, reciprocal_rank
from core.knowledge.documents import Hit, SearchFilters
from core.knowledge_base.base import KnowledgeBase
from core.llm.tokens import estimate_tokens
from core.pipeline.context import build_sources_block
from core.pipeline.filling import decide_shown_hits
from core.pipeline.grounding import fetch_context_hits

MODES = ("vector", "keyword", "hybrid")
STRATEGIES = ("top-k", "filled")
# The fixed budget the issue compares at, in characters (about 4 a token).
FIXED_BUDGET_CHARS = 13_000


def normalise(text: str) -> str:
    return " ".join(html.unescape(text).lower().replace("\u00a0", " ").split())


def fact_recall(facts: Sequence[str], context: str) -> float:
    """The share of expected facts (short verbatim snippets) found in the context."""
    found = normalise(context)
    return sum(normalise(fact) in found for fact in facts) / len(facts) if facts else 0.0


@dataclass
class Tally:
    """Sums per (mode, strategy, budget) row, averaged when printed."""

    values: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, value: float) -> None:
        self.values.setdefault(name, []).append(value)

    def add_all(self, measures: Mapping[str, float]) -> None:
        for name, value in measures.items():
            self.add(name, value)

    def mean(self, name: str) -> float | None:
        found = self.values.get(name)
        return sum(found) / len(found) if found else None


def budgets_of(settings: Settings) -> dict[str, int]:
    """The budgets in tokens: the pipeline's share of `pipeline.context_tokens` for
    sources, and the fixed 13,000 characters."""
    return {
        "default": settings.pipeline.context_tokens * 3 // 4,
        "13000 chars": FIXED_BUDGET_CHARS // 4,
    }


async def _context(kb: KnowledgeBase, hits: list[Hit], strategy: str, budget: int, k: int) -> str:
    if strategy == "top-k":
        chosen = hits[:k]
    else:
        chosen = await fetch_context_hits(kb.retriever, hits, budget)
    block, _ = build_sources_block(chosen, budget)
    return block


async def measure_hits(
    kb: KnowledgeBase,
    settings: Settings,
    question: Question,
    hits: list[Hit],
    strategy: str,
    budget: int,
) -> dict[str, float]:
    """The measures of one search's `hits` for `question`, the context chosen by
    `strategy` within `budget` tokens: ranking and context recall for an answerable
    question, whether nothing would be shown for an unanswerable one."""
    retrieval = settings.retrieval
    shown = decide_shown_hits(hits, retrieval)
    if not question.expected_ids:
        return {"nothing found (unanswerable)": float(not shown)}
    ranked = list(dict.fromkeys(hit.document_id for hit in hits))
    context = await _context(kb, hits, strategy, budget, retrieval.top_k)
    return {
        "hit@5": hit_at(ranked, question.expected_ids, 5),
        "mrr": reciprocal_rank(ranked, question.expected_ids),
        "passages shown (answerable)": float(bool(shown)),
        "context recall": fact_recall(question.facts, context),
        "context chars": float(len(context)),
        "context tokens": float(estimate_tokens(context)),
    }


async def measure_retrieval(
    kb: KnowledgeBase,
    settings: Settings,
    questions: Sequence[Question],
    collection: str,
    modes: Sequence[str] = MODES,
    strategies: Sequence[str] = STRATEGIES,
) -> dict[tuple[str, str, str], Tally]:
    """Every measure per (mode, strategy, budget name)."""
    budgets = budgets_of(settings)
    filters = SearchFilters(collections=(collection,))
    tallies: dict[tuple[str, str, str], Tally] = {}
    for question in questions:
        for mode in modes:
            hits = await kb.retriever.search(
                question.question, filters, k=settings.retrieval.context_candidates, mode=mode
            )
            for strategy in strategies:
                for name, budget in budgets.items():
                    measures = await measure_hits(kb, settings, question, hits, strategy, budget)
                    tallies.setdefault((mode, strategy, name), Tally()).add_all(measures)
    return tallies


COLUMNS = (
    "hit@5",
    "mrr",
    "context recall",
    "context chars",
    "passages shown (answerable)",
    "nothing found (unanswerable)",
)


def build_table(tallies: dict[tuple[str, str, str], Tally]) -> str:
    """The measures as a Markdown table, a row per mode, strategy and budget."""
    lines = [
        "| mode | context | budget | " + " | ".join(COLUMNS) + " |",
        "| --- | --- | --- | " + " | ".join("---:" for _ in COLUMNS) + " |",
    ]
    for (mode, strategy, budget), tally in tallies.items():
        cells = []
        for column in COLUMNS:
            value = tally.mean(column)
            cells.append("" if value is None else f"{value:.0f}" if value > 10 else f"{value:.3f}")
        lines.append(f"| {mode} | {strategy} | {budget} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# (vector weight, keyword weight, rrf_k) tried by `--fusion-grid`.
FUSION_GRID = [
    (vector, keyword, k)
    for vector, keyword in ((1.0, 0.5), (1.0, 0.75), (1.0, 1.0), (0.75, 1.0), (0.5, 1.0))
    for k in (10, 30, 60)
]


async def measure_fusion_grid(
    kb: KnowledgeBase, current: list[Settings], questions: Sequence[Question], collection: str
) -> str:
    """Hybrid ranking (hit@5, MRR) with each fusion setting of the grid, as a table.
    `current` holds the settings the knowledge base reads; each row replaces them."""
    base = current[0]
    filters = SearchFilters(collections=(collection,))
    answerable = [q for q in questions if q.expected_ids]
    lines = ["| vector | keyword | rrf_k | hit@5 | mrr |", "| ---: | ---: | ---: | ---: | ---: |"]
    try:
        for vector, keyword, k in FUSION_GRID:
            retrieval = base.retrieval.model_copy(
                update={"vector_weight": vector, "keyword_weight": keyword, "rrf_k": k}
            )
            current[0] = base.model_copy(update={"retrieval": retrieval})
            hits5 = mrr = 0.0
            for question in answerable:
                hits = await kb.retriever.search(question.question, filters, k=20)
                ranked = list(dict.fromkeys(hit.document_id for hit in hits))
                hits5 += hit_at(ranked, question.expected_ids, 5)
                mrr += reciprocal_rank(ranked, question.expected_ids)
            count = len(answerable) or 1
            lines.append(
                f"| {vector} | {keyword} | {k} | {hits5 / count:.3f} | {mrr / count:.3f} |"
            )
    finally:
        current[0] = base
    return "\n".join(lines)
