"""The committed vectors of the public sets (tests/support/embedding_cache.py) are the
real models' own, and they are current: a fresh clone embeds nothing the evaluation
tests already embedded."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from core.config.knowledge import DEFAULT_EMBEDDING_MODEL, MULTILINGUAL_EMBEDDING_MODEL
from core.evaluation.xquad import decide_sample, read_questions
from core.knowledge.search.embedding import Embedders
from tests.support.embedding_cache import KEPT, CachingEmbedders

XQUAD = Path(__file__).parents[1] / "data" / "xquad"
REFRESH = "the committed vectors are stale: refresh them (docs/development/testing.md)"


@pytest.mark.parametrize(
    ("model", "language"), [(MULTILINGUAL_EMBEDDING_MODEL, "zh"), (DEFAULT_EMBEDDING_MODEL, "en")]
)
async def test_a_kept_question_vector_is_the_models_own(tmp_path, model, language):
    assert KEPT.is_file(), "tests/data/embeddings/public-sets.npz is missing"
    question = decide_sample(read_questions(XQUAD), ["held-out"], 60)[0].texts[language]
    cached, real = CachingEmbedders(tmp_path), Embedders()
    try:
        kept = await cached.get(model).embed_queries([question])
        fresh = await real.get(model).embed_queries([question])
    finally:
        cached.close()
        real.close()
    with sqlite3.connect(tmp_path / "vectors.sqlite3") as db:
        computed = db.execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert computed == 0, REFRESH
    assert np.allclose(kept, fresh, atol=1e-6), "the kept vector is not what the model gives"
