"""The retrieval study on a slice of the real corpus (the PostgreSQL documentation): the
slice's questions over their pages and a spread of other pages. Floors just below the
measured figures, so that a regression of chunking, search or context fails CI; the
whole study is `knowledge-eval retrieval` (docs/development/evaluation-retrieval.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from core.evaluation.cli import main

DATA = Path(__file__).parent.parent / "data" / "pgdocs"
CORPUS = Path("/usr/share/doc/postgresql-doc-15/html")
# Every n-th page of the documentation joins the slice's own pages, as distractors.
SPREAD = 25
# Measured on this slice: hit@5 0.955, MRR 0.872, context recall 0.864, nothing found 1.0
# (chunks sized to the model; with chunks of 200 tokens: 1.000, 0.902, 0.864).
HIT5, MRR, RECALL, NOTHING_FOUND = 0.95, 0.85, 0.8, 0.5


def slice_of(tmp_path: Path) -> tuple[Path, Path]:
    assert CORPUS.is_dir(), "the corpus is missing: run deploy/setup-corpus.sh (tests/run.sh does)"
    lines = [json.loads(line) for line in (DATA / "questions.jsonl").read_text().splitlines()]
    chosen = [item for item in lines if item["slice"]]
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(item) + "\n" for item in chosen))
    pages = sorted(CORPUS.glob("*.html"))
    wanted = {page for item in chosen for page in item["expected_ids"]}
    wanted |= {page.name for page in pages[::SPREAD]}
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in sorted(wanted):
        shutil.copy(CORPUS / name, folder / name)
    return folder, questions


def rows_of(output: str) -> dict[tuple[str, str, str], dict[str, float]]:
    header, *rows = [
        line for line in output.splitlines() if line.startswith("| ") and "---" not in line
    ]
    names = [cell.strip() for cell in header.strip("|").split("|")]
    table = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        if len(cells) != len(names) or cells[0] not in ("vector", "keyword", "hybrid"):
            continue
        table[tuple(cells[:3])] = {
            n: float(c) for n, c in zip(names[3:], cells[3:], strict=True) if c
        }
    return table


def test_retrieval_on_a_slice_of_the_postgresql_documentation(tmp_path, capsys, cached_embeddings):
    folder, questions = slice_of(tmp_path)
    code = main(
        [
            "--config",
            str(DATA / "eval.toml"),
            "retrieval",
            "--collection",
            "pgdocs",
            "--corpus",
            str(folder),
            "--questions",
            str(questions),
        ]
    )
    output = capsys.readouterr().out
    assert code == 0, output
    table = rows_of(output)
    hybrid = table[("hybrid", "filled", "default")]
    assert hybrid["hit@5"] >= HIT5 and hybrid["mrr"] >= MRR, output
    assert hybrid["context recall"] >= RECALL, output
    # Hybrid search gives the model at least what either half gives (the right pages in
    # the top 5, their facts in the context). On these 24 questions its first ranks are
    # a little behind the vector half's (MRR 0.872 against 0.894); on the whole set they
    # are well ahead (0.750 against 0.705, docs/development/evaluation-retrieval.md).
    for half in ("vector", "keyword"):
        other = table[(half, "filled", "default")]
        assert hybrid["hit@5"] >= other["hit@5"], f"hybrid finds what {half} finds"
        assert hybrid["context recall"] >= other["context recall"], f"hybrid beats {half}"
    assert hybrid["mrr"] >= table[("keyword", "filled", "default")]["mrr"]
    assert hybrid["context recall"] >= table[("hybrid", "top-k", "default")]["context recall"]
    assert table[("hybrid", "filled", "13000 chars")]["context chars"] > 4 * 2200
    assert hybrid["nothing found (unanswerable)"] >= NOTHING_FOUND, output
