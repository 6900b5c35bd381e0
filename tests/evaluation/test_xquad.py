"""Cross-lingual retrieval on XQuAD's held-out articles (24-47), a public set nobody here
wrote and nobody tuned on: questions in five languages about English paragraphs, searched
as asked, without a model. The figures of the full run are in docs/development/evaluation-xquad.md;
this holds a spread sample of 60 held-out questions per language (100 in English with
the English default) so that a regression fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.evaluation.cli import main
from core.evaluation.xquad import (
    LANGUAGES,
    decide_sample,
    read_paragraphs,
    read_questions,
    run_xquad,
)

DATA = Path(__file__).parents[1] / "data" / "xquad"
SAMPLE = 60
# The goals on the held-out half (hit@5, search as asked, no model).
MULTILINGUAL_GOALS = {"en": 0.98, "de": 0.90, "es": 0.90, "ru": 0.90, "zh": 0.85}
# What search alone shows (2026-11-30, measured 0.93 / 0.83 in English, 0.55-0.87 /
# 0.77-0.90 in the others on this sample, read after the anchors were chosen on the
# development half): an English question whose article is gone showed another's
# passage three times in four when e5 had one pair of anchors. Regression floors.
SHOWN_FLOORS = {"en": (0.90, 0.80), **dict.fromkeys(("de", "es", "ru", "zh"), (0.50, 0.70))}


def test_the_set_is_whole_and_split_by_article():
    paragraphs, questions = read_paragraphs(DATA), read_questions(DATA)
    assert len(paragraphs) == 240 and len(questions) == 1190
    assert all(set(q.texts) == set(LANGUAGES) for q in questions)
    held_out = decide_sample(questions, ["held-out"], None)
    assert len(held_out) == 558 and all(q.article >= 24 for q in held_out)
    assert len(decide_sample(questions, ["held-out"], SAMPLE)) == SAMPLE


async def test_the_multilingual_model_finds_english_paragraphs_from_five_languages(embedders):
    questions = decide_sample(read_questions(DATA), ["held-out"], SAMPLE)
    figures = await run_xquad(
        DATA, "multilingual-e5-small", {}, questions, LANGUAGES, embedders, ("as asked",)
    )
    found = {lang: figures[("held-out", lang, "as asked")]["hit@5"] for lang in LANGUAGES}
    missed = {
        lang: f"{found[lang]:.2f} < {goal}"
        for lang, goal in MULTILINGUAL_GOALS.items()
        if found[lang] < goal
    }
    assert not missed, missed
    for lang, (shown, nothing) in SHOWN_FLOORS.items():
        measured = figures[("held-out", lang, "as asked")]
        assert measured["shown"] >= shown, (lang, measured)
        assert measured["nothing when gone"] >= nothing, (lang, measured)


def test_the_report_shows_the_english_default_unchanged_in_english(capsys, cached_embeddings):
    code = main(
        [
            "xquad",
            "--models",
            "all-MiniLM-L6-v2",
            "--split",
            "held-out",
            "--languages",
            "en",
            "--per-split",
            "100",
        ]
    )
    table = capsys.readouterr().out
    assert code == 0
    row = next(line for line in table.splitlines() if line.startswith("| all-MiniLM-L6-v2"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[:5] == ["all-MiniLM-L6-v2", "held-out", "en", "as asked", "100"], table
    assert float(cells[6]) >= 0.98, f"hit@5 {cells[6]}"


@pytest.mark.parametrize("argv", [["xquad", "--data", "/nonexistent"]])
def test_a_missing_set_is_told(argv, capsys):
    assert main(argv) == 2
    assert "cannot be used" in capsys.readouterr().err
