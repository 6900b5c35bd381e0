"""Train the small-talk model of summaries without a model (core/summaries/smalltalk.py).

    python -m tests.support.train_smalltalk

It reads the labelled lines of tests/data/summaries/smalltalk/ and the messages of the
development logs (a chatter message is small talk, a message of a key fact is work; the
held-out sets heldout2/ and heldout3/ are never read), embeds them with the bundled
multilingual e5 as the summariser does, fits a logistic regression (scikit-learn, which
sentence-transformers installs) and writes core/summaries/smalltalk.json. It prints, for
each development log, how the model trained without that log ranks its lines.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np

from core.knowledge.search.embed_e5 import BundledE5Embedder
from core.summaries.smalltalk import WEIGHTS

DATA = Path(__file__).parent.parent / "data" / "summaries"
DEVELOPED = ("", "heldout", "fresh", "dev2")  # never heldout2/ nor heldout3/
# Regularisation, and the probability above which a line is small talk: chosen on the
# development logs (leave-one-log-out), where 0.62 separated best.
STRENGTH = 1.0
THRESHOLD = 0.62


def read_examples() -> list[tuple[str, str, int]]:
    """(source, text, 1 for small talk / 0 for work) of every labelled line."""
    out: list[tuple[str, str, int]] = []
    for path in sorted((DATA / "smalltalk").glob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(raw)
            out.append((path.name, row["text"], int(row["label"] == "chatter")))
    for folder in DEVELOPED:
        for path in sorted((DATA / folder).glob("*.json")):
            log = json.loads(path.read_text(encoding="utf-8"))
            facts = {m for fact in log["key_facts"] for group in fact["messages"] for m in group}
            for message in log["messages"]:
                if message["id"] in log["noise"]:
                    out.append((path.name, message["text"], 1))
                elif message["id"] in facts:
                    out.append((path.name, message["text"], 0))
    return out


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    examples = read_examples()
    embedder = BundledE5Embedder()
    vectors = np.array(asyncio.run(embedder.embed_queries([text for _, text, _ in examples])))
    labels = np.array([label for _, _, label in examples])
    sources = np.array([source for source, _, _ in examples])

    def fit(rows: np.ndarray) -> LogisticRegression:
        model = LogisticRegression(C=STRENGTH, max_iter=3000, class_weight="balanced")
        return model.fit(vectors[rows], labels[rows])

    pooled: list[tuple[float, int]] = []
    for source in sorted({s for s in sources if s.endswith(".json")}):
        held = sources == source
        chances = fit(~held).predict_proba(vectors[held])[:, 1]
        truth = labels[held]
        pooled += zip(chances.tolist(), truth.tolist(), strict=True)
        caught = int(((chances > THRESHOLD) & (truth == 1)).sum())
        lost = int(((chances > THRESHOLD) & (truth == 0)).sum())
        ranked = roc_auc_score(truth, chances) if 0 < truth.sum() < len(truth) else float("nan")
        print(
            f"{source:32} chatter {caught}/{truth.sum()}  work judged chatter {lost}/"
            f"{len(truth) - truth.sum()}  AUC {ranked:.2f}"
        )
    for threshold in (0.5, 0.55, 0.6, 0.62, 0.65, 0.7):
        caught = sum(1 for p, t in pooled if t and p > threshold)
        lost = sum(1 for p, t in pooled if not t and p > threshold)
        chatter = sum(t for _, t in pooled)
        print(
            f"threshold {threshold:.2f}: chatter {caught}/{chatter}, "
            f"work judged chatter {lost}/{len(pooled) - chatter}"
        )
    model = fit(np.ones(len(labels), dtype=bool))
    WEIGHTS.write_text(
        json.dumps(
            {
                "model": "multilingual-e5-small (query vectors), logistic regression",
                "examples": len(labels),
                "threshold": THRESHOLD,
                "bias": round(float(model.intercept_[0]), 6),
                "weights": [round(float(w), 6) for w in model.coef_[0]],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"{len(labels)} examples ({labels.sum()} small talk) → {WEIGHTS}")


if __name__ == "__main__":
    main()
