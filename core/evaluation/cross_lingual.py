"""Retrieval of questions asked in another language than the documents, measured without
a model (`knowledge-eval retrieval --other-languages FILE`).

Each question of the file (JSON lines: `question`, `language`, `english`: the English
question it translates, `expected_ids`, `facts`) is searched three ways with hybrid
search, the context filled as the pipeline does:

- `english`: the English question: the reference;
- `no model`: the question as asked, no translations: what happens when there is no
  model or the pre-step fails;
- `upper bound`: the question as asked with `translations={"en": english}`: what a
  pre-step that translates perfectly gives (a scripted model that returns the known
  English question). A real model's translation can only do as well or worse.

The measures are those of the main report (hit@5, MRR, context recall at each budget),
per language and overall, and the upper bound as a share of the English figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.config import Settings
from core.evaluation.questions import Question, read_json_lines
from core.evaluation.retrieval import Tally, budgets_of, measure_hits
from core.knowledge.documents import Hit, SearchFilters
from core.knowledge_base.base import KnowledgeBase

ROWS = ("english", "no model", "upper bound")
OVERALL = "overall"
# The way the main report's headline chooses context: the budget filled (the pipeline's).
STRATEGY = "filled"
# The goal: the upper bound reaches this share of the English hit@5 and context recall.
GOAL = 0.9


@dataclass(frozen=True)
class ForeignQuestion:
    """A question in `language`, with the English question it translates."""

    question: Question
    language: str
    english: str


def parse_foreign(item: Mapping) -> ForeignQuestion:
    texts = [item.get(name) for name in ("question", "language", "english")]
    ids, facts = item.get("expected_ids", []), item.get("facts", [])
    if not all(isinstance(text, str) and text.strip() for text in texts):
        raise ValueError("question, language and english must be text")
    if not isinstance(ids, list) or not ids or not isinstance(facts, list):
        raise ValueError("expected_ids must be a list of pages and facts a list")
    question, language, english = texts
    return ForeignQuestion(
        Question(str(question), expected_ids=tuple(map(str, ids)), facts=tuple(map(str, facts))),
        str(language),
        str(english),
    )


def read_foreign_questions(path: Path) -> list[ForeignQuestion]:
    """The file's questions; QuestionSetError names a line that cannot be used."""
    return read_json_lines(path, parse_foreign)


def query_of(item: ForeignQuestion, row: str) -> tuple[str, dict[str, str]]:
    """What a row searches: (query, translations)."""
    if row == "english":
        return item.english, {}
    if row == "no model":
        return item.question.question, {}
    return item.question.question, {"en": item.english}


async def measure_cross_lingual(
    kb: KnowledgeBase, settings: Settings, items: Sequence[ForeignQuestion], collection: str
) -> dict[tuple[str, str, str], Tally]:
    """The measures per (language or "overall", row, budget name)."""
    filters = SearchFilters(collections=(collection,))
    searched: dict[tuple[str, tuple[tuple[str, str], ...]], list[Hit]] = {}
    tallies: dict[tuple[str, str, str], Tally] = {}
    for item in items:
        for row in ROWS:
            query, translations = query_of(item, row)
            key = (query, tuple(translations.items()))
            if key not in searched:  # the same English question is asked in each language
                searched[key] = await kb.retriever.search(
                    query,
                    filters,
                    k=settings.retrieval.context_candidates,
                    translations=translations,
                )
            for name, budget in budgets_of(settings).items():
                measures = await measure_hits(
                    kb, settings, item.question, searched[key], STRATEGY, budget
                )
                for language in (item.language, OVERALL):
                    tallies.setdefault((language, row, name), Tally()).add_all(measures)
    return tallies


def languages_of(tallies: Mapping[tuple[str, str, str], Tally]) -> list[str]:
    """The languages in the order first met, then "overall"."""
    found = list(dict.fromkeys(language for language, _, _ in tallies))
    return [language for language in found if language != OVERALL] + [OVERALL]


def figures_of(
    tallies: Mapping[tuple[str, str, str], Tally], language: str, row: str, budgets: Sequence[str]
) -> dict[str, float | None]:
    """hit@5, MRR and context recall at each budget of one row."""
    rows = [tallies.get((language, row, budget), Tally()) for budget in budgets]
    figures = {"hit@5": rows[0].mean("hit@5"), "mrr": rows[0].mean("mrr")}
    for budget, tally in zip(budgets, rows, strict=True):
        figures[f"context recall, {budget}"] = tally.mean("context recall")
    return figures


def _cell(value: float | None, percent: bool = False) -> str:
    if value is None:
        return ""
    return f"{value:.0%}" if percent else f"{value:.3f}"


def share(part: float | None, whole: float | None) -> float | None:
    """`part` as a share of `whole` (None when either is missing or `whole` is 0)."""
    return None if part is None or not whole else part / whole


def build_cross_lingual_table(tallies: Mapping[tuple[str, str, str], Tally]) -> str:
    """Two Markdown tables: the three rows per language, then the upper bound as a share
    of the English figures with whether it meets the goal."""
    budgets = list(dict.fromkeys(budget for _, _, budget in tallies))
    names = ["hit@5", "MRR"] + [f"context recall, {budget}" for budget in budgets]
    lines = [
        "Questions in other languages, hybrid search, context filled. `english`: the English"
        " question (the reference); `no model`: the question as asked, no translation (no"
        " model, or the pre-step failed); `upper bound`: the question as asked plus its"
        " known English question as the translation (a scripted model that translates"
        " perfectly).",
        "",
        "| language | search | questions | " + " | ".join(names) + " |",
        "| --- | --- | ---: | " + " | ".join("---:" for _ in names) + " |",
    ]
    for language in languages_of(tallies):
        for row in ROWS:
            count = len(tallies.get((language, row, budgets[0]), Tally()).values.get("mrr", []))
            cells = [_cell(v) for v in figures_of(tallies, language, row, budgets).values()]
            lines.append(f"| {language} | {row} | {count} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Upper bound as a share of English (goal: at least {GOAL:.0%} of hit@5 and of"
        " context recall):",
        "",
        "| language | " + " | ".join(names) + " | goal met |",
        "| --- | " + " | ".join("---:" for _ in names) + " | --- |",
    ]
    for language in languages_of(tallies):
        english = figures_of(tallies, language, "english", budgets)
        bound = figures_of(tallies, language, "upper bound", budgets)
        shares = {name: share(bound[name], english[name]) for name in english}
        goal = [value for name, value in shares.items() if name != "mrr"]
        met = all(value is not None and value >= GOAL for value in goal)
        cells = [_cell(value, percent=True) for value in shares.values()]
        lines.append(f"| {language} | " + " | ".join(cells) + f" | {'yes' if met else 'no'} |")
    return "\n".join(lines)
