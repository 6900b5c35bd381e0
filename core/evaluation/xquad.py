"""Cross-lingual retrieval on XQuAD (`knowledge-eval xquad`), a public set nobody here wrote.

XQuAD's 240 English Wikipedia paragraphs (48 articles) are indexed as documents, titled
by their article, and each of its 1,190 questions is searched in each language through
`Retriever.search` (hybrid), two ways: `as asked` (no model, or a pre-step that failed)
and `translated` (the English question given as the pre-step's translation: what a
model that translates perfectly gives). Measured per language: where the question's
paragraph ranks among the distinct documents found (hit@1, hit@5, MRR over the first 10),
and what an answer by search alone shows (`decide_relevant_hits`, [retrieval]'s
thresholds): whether it shows the question's paragraph ("shown"), and whether it shows
nothing once the question's article is taken out of what was found ("nothing when
gone": a question the documents cannot answer).

Articles 0-23 are the development half, 24-47 the held-out half: both are indexed
together, and their questions are reported apart, so that a figure shows what
generalises. Nobody tunes on the held-out half's failures.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.config import Settings, parse_config
from core.config.knowledge import EmbeddingEndpointSettings
from core.evaluation.retrieval import Tally
from core.evaluation.scores import hit_at, reciprocal_rank
from core.knowledge.documents import Document, Hit, SearchFilters
from core.knowledge.search.embedding import Embedders
from core.knowledge_base.base import KnowledgeBase
from core.pipeline.filling import decide_shown_hits

COLLECTION = "xquad"
LANGUAGES = ("en", "de", "es", "ru", "zh")
ROWS = ("as asked", "translated")
SPLITS = ("development", "held-out")
# The first article of the held-out half.
HELD_OUT_FROM = 24
# Documents ranked per search (MRR is over these).
RANKED = 10
MEASURES = ("hit@1", "hit@5", "mrr", "shown", "nothing when gone")


@dataclass(frozen=True)
class XquadQuestion:
    id: str
    article: int
    paragraph: str
    texts: Mapping[str, str]  # language -> the question in it

    @property
    def split(self) -> str:
        return SPLITS[self.article >= HELD_OUT_FROM]


def read_paragraphs(folder: Path) -> list[Document]:
    """The set's paragraphs as documents of COLLECTION, titled by their article."""
    documents = []
    for line in (folder / "paragraphs.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        documents.append(
            Document(COLLECTION, item["id"], item["title"], item["text"], "text", language="en")
        )
    return documents


def read_questions(folder: Path) -> list[XquadQuestion]:
    questions = []
    for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        texts = {language: item[language] for language in LANGUAGES if language in item}
        questions.append(XquadQuestion(item["id"], item["article"], item["paragraph"], texts))
    return questions


def decide_sample(
    questions: Sequence[XquadQuestion], splits: Iterable[str], per_split: int | None
) -> list[XquadQuestion]:
    """The questions of `splits`, at most `per_split` of each, spread evenly over it."""
    chosen: list[XquadQuestion] = []
    for split in splits:
        of_split = [question for question in questions if question.split == split]
        if per_split is not None and per_split < len(of_split):
            step = len(of_split) / per_split
            of_split = [of_split[int(i * step)] for i in range(per_split)]
        chosen += of_split
    return chosen


def article_of(paragraph_id: str) -> int:
    """The article of a paragraph's id ("a07p3" → 7)."""
    return int(paragraph_id[1:].partition("p")[0])


def rank_of(found: Sequence[str]) -> list[str]:
    """The distinct documents found, in order (a paragraph may be several chunks)."""
    return list(dict.fromkeys(found))[:RANKED]


async def measure_xquad(
    kb: KnowledgeBase,
    questions: Sequence[XquadQuestion],
    languages: Sequence[str],
    rows: Sequence[str] = ROWS,
) -> dict[tuple[str, str, str], Tally]:
    """The measures per (split, language, row); English is only asked as asked."""
    filters = SearchFilters(collections=(COLLECTION,))
    retrieval = kb.retriever.settings().retrieval

    def shown(hits: Sequence[Hit]) -> list[str]:
        return [hit.document_id for hit in decide_shown_hits(hits, retrieval)]

    tallies: dict[tuple[str, str, str], Tally] = {}
    for question in questions:
        for language in languages:
            text = question.texts.get(language)
            if text is None:
                continue
            for row in rows if language != "en" else ROWS[:1]:
                translations = {"en": question.texts["en"]} if row == "translated" else {}
                hits = await kb.retriever.search(
                    text, filters, k=RANKED, overfetch=3, translations=translations
                )
                ranked = rank_of([hit.document_id for hit in hits])
                expected = (question.paragraph,)
                tally = tallies.setdefault((question.split, language, row), Tally())
                tally.add("hit@1", hit_at(ranked, expected, 1))
                tally.add("hit@5", hit_at(ranked, expected, 5))
                tally.add("mrr", reciprocal_rank(ranked, expected))
                tally.add("shown", float(question.paragraph in shown(hits)))
                gone = [hit for hit in hits if article_of(hit.document_id) != question.article]
                tally.add("nothing when gone", float(not shown(gone)))
    return tallies


XQUAD_CONFIG = """
[matrix]
homeserver = "http://127.0.0.1:1"
user_id = "@evaluation:localhost"
password = "unused"

[bot]
data_dir = "{data_dir}"

[sources.xquad]
token = "unused"

[collections.xquad]
source = "xquad"
public = true
embedding_model = "{model}"
language = "en"
{chunking}"""


def build_xquad_settings(
    data_dir: Path,
    model: str,
    endpoints: Mapping[str, EmbeddingEndpointSettings],
    chunk_tokens: int | None = None,
) -> Settings:
    """A throw-away index in `data_dir` (embedded Chroma, SQLite) of one collection
    embedded with `model` (chunks of `chunk_tokens`, or the model's size); `endpoints`
    are the embedding endpoints it may name."""
    chunking = f"chunk_tokens = {chunk_tokens}\n" if chunk_tokens else ""
    text = XQUAD_CONFIG.format(
        data_dir=json.dumps(str(data_dir))[1:-1], model=model, chunking=chunking
    )
    settings = parse_config(text, origin="xquad", env={}, base_dir=data_dir)
    knowledge = settings.knowledge.model_copy(update={"embedding_endpoints": dict(endpoints)})
    return settings.model_copy(update={"knowledge": knowledge})


async def run_xquad(
    folder: Path,
    model: str,
    endpoints: Mapping[str, EmbeddingEndpointSettings],
    questions: Sequence[XquadQuestion],
    languages: Sequence[str],
    embedders: Embedders | None = None,
    rows: Sequence[str] = ROWS,
    chunk_tokens: int | None = None,
) -> dict[tuple[str, str, str], dict]:
    """Index the paragraphs with `model` in a fresh folder and measure `questions`."""
    with tempfile.TemporaryDirectory(prefix="xquad-") as fresh:
        settings = build_xquad_settings(Path(fresh), model, endpoints, chunk_tokens)
        kb = await KnowledgeBase.open(lambda: settings, embedders)
        try:
            documents = read_paragraphs(folder)
            for start in range(0, len(documents), 64):
                await kb.indexer.put_many(documents[start : start + 64])
            return figures_of(await measure_xquad(kb, questions, languages, rows))
        finally:
            await kb.close()


def figures_of(tallies: Mapping[tuple[str, str, str], Tally]) -> dict[tuple[str, str, str], dict]:
    """{(split, language, row): {"questions", *MEASURES}}."""
    return {
        key: {
            "questions": len(tally.values.get("mrr", [])),
            **{name: tally.mean(name) for name in MEASURES},
        }
        for key, tally in tallies.items()
    }


def build_xquad_table(results: Mapping[str, Mapping[tuple[str, str, str], dict]]) -> str:
    """One Markdown table: a row per model, split, language and search."""
    lines = [
        "XQuAD: English paragraphs, questions in each language, hybrid search. `as asked`:"
        " no model; `translated`: the English question as the pre-step's translation."
        " `shown`: search alone shows the question's paragraph; `nothing when gone`: it"
        " shows nothing once the question's article is taken out.",
        "",
        "| model | split | language | search | questions | hit@1 | hit@5 | MRR | shown |"
        " nothing when gone |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for model, figures in results.items():
        for key in sorted(figures, key=_order):
            split, language, row = key
            found = figures[key]
            cells = [f"{found[name]:.3f}" for name in MEASURES]
            lines.append(
                f"| {model} | {split} | {language} | {row} | {found['questions']} | "
                + " | ".join(cells)
                + " |"
            )
    return "\n".join(lines)


def _order(key: tuple[str, str, str]) -> tuple[int, int, int]:
    split, language, row = key
    return SPLITS.index(split), LANGUAGES.index(language), ROWS.index(row)
