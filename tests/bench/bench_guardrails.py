"""Figures of the guardrails and the rephrasing check on the labelled sets in tests/data.

    .venv/bin/python -m tests.bench.bench_guardrails

Prints precision and recall of the toxicity and injection flags: the local tier alone,
and combined with a model's grade the way the pipeline combines them (local tier first,
then pipeline.toxicity_threshold on the model's grade, or its injection flag). No model
runs here: the "model" is a scripted one that grades each case as labelled, so the
combined figures are an upper bound that shows what the local tier costs or saves.
Then how well the rephrasing check separates faithful from distorted rewrites, beside
BLEU and chrF alone at their best threshold; and the time each check takes.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from sacrebleu.metrics import BLEU, CHRF

from core.config.guardrails import GuardrailSettings
from core.config.memory import MemorySettings
from core.config.pipeline import PipelineSettings
from core.guardrails.injection import InjectionDetector
from core.guardrails.toxicity import LocalToxicity
from core.memory.rephrase import decide_rephrasing
from core.pipeline.prestep import PrestepVerdict, decide_from_verdict
from core.timerange import TimeExpressionFinder

DATA = Path(__file__).parent.parent / "data" / "guardrails"


def load(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line]


def scores(flags: list[bool], labels: list[bool]) -> str:
    hits = sum(f and label for f, label in zip(flags, labels, strict=True))
    precision = hits / max(1, sum(flags))
    recall = hits / max(1, sum(labels))
    return (
        f"precision {precision:.2f}  recall {recall:.2f}  (n={len(labels)}, positive={sum(labels)})"
    )


def timed(function: Callable[[str], object], texts: list[str]) -> str:
    times = []
    for text in texts:
        started = time.perf_counter()
        function(text)
        times.append((time.perf_counter() - started) * 1000)
    return f"p50 {statistics.median(times):.2f} ms, max {max(times):.2f} ms"


def model_verdict(toxic: bool = False, injection: bool = False) -> PrestepVerdict:
    return PrestepVerdict(
        toxicity=8 if toxic else 0,
        injection=injection,
        kind="command",
        in_scope=True,
        remember=False,
        needs_context=False,
        standalone_question="",
    )


def toxicity_figures() -> None:
    cases = load("toxicity.jsonl")
    labels = [case["toxic"] for case in cases]
    grader = LocalToxicity()
    grader.grade("warm-up")
    grades = [grader.grade(case["text"]) for case in cases]
    print("Toxicity (tests/data/guardrails/toxicity.jsonl)")
    for level in (5, 7, GuardrailSettings().local_toxicity_grade):
        print(
            f"  local tier alone, grade >= {level}: {scores([g >= level for g in grades], labels)}"
        )
    threshold = PipelineSettings().toxicity_threshold
    local = GuardrailSettings().local_toxicity_grade
    combined = [
        grade >= local or decide_from_verdict(model_verdict(toxic=label), threshold) == "toxic"
        for grade, label in zip(grades, labels, strict=True)
    ]
    print(f"  local tier + scripted model:  {scores(combined, labels)}")
    saved = sum(grade >= local for grade, label in zip(grades, labels, strict=True) if label)
    print(f"  toxic questions declined before any model call: {saved} of {sum(labels)}")
    print(f"  local tier time: {timed(grader.grade, [c['text'] for c in cases])}")


def injection_figures() -> None:
    detector = InjectionDetector()
    print("Injection flags")
    for name in ("injection.jsonl", "injection_heldout.jsonl"):
        cases = load(name)
        labels = [case["injection"] for case in cases]
        flags = [detector.find(case["text"]) is not None for case in cases]
        print(f"  patterns alone, {name}: {scores(flags, labels)}")
        combined = [
            flag or decide_from_verdict(model_verdict(injection=label), 6) == "injection"
            for flag, label in zip(flags, labels, strict=True)
        ]
        print(f"  patterns + scripted model, {name}: {scores(combined, labels)}")
    texts = [case["text"] for case in load("injection.jsonl")]
    print(f"  pattern time: {timed(detector.find, texts)}")


def best_threshold(values: list[float], faithful: list[bool]) -> tuple[float, float]:
    """The accuracy of the best single threshold (faithful when value >= threshold)."""
    best = (0.0, 0.0)
    for threshold in sorted(set(values)):
        right = sum((v >= threshold) == f for v, f in zip(values, faithful, strict=True))
        best = max(best, (right / len(values), threshold))
    return best


def rephrasing_figures() -> None:
    settings = MemorySettings()
    markers = frozenset(
        part for word in (*settings.again_words, *settings.amend_words) for part in word.split()
    )
    print("Rephrasing check: faithful rewrites accepted, distorted ones rejected")
    for name in ("rephrasings.jsonl", "rephrasings_heldout.jsonl"):
        cases = load(name)
        faithful = [case["label"] == "faithful" for case in cases]
        accepted = []
        for case in cases:
            args = (case["original"], case["rephrased"], case["conversation"])
            accepted.append(
                decide_rephrasing(*args, settings.rephrase_min_chrf, markers)[1].accepted
            )
        right = sum(a == f for a, f in zip(accepted, faithful, strict=True))
        rejected_distortions = sum(not a and not f for a, f in zip(accepted, faithful, strict=True))
        print(
            f"  {name}: accuracy {right / len(cases):.2f}; distorted rejected "
            f"{rejected_distortions}/{faithful.count(False)}; faithful accepted "
            f"{sum(a and f for a, f in zip(accepted, faithful, strict=True))}/{sum(faithful)}"
        )
        for metric, scorer in (("BLEU", BLEU(effective_order=True)), ("chrF", CHRF())):
            values = [scorer.sentence_score(c["rephrased"], [c["original"]]).score for c in cases]
            accuracy, threshold = best_threshold(values, faithful)
            print(
                f"    {metric} alone at its best threshold ({threshold:.1f}): accuracy {accuracy:.2f}"
            )
    case = load("rephrasings.jsonl")[0]
    print(
        "  check time: "
        + timed(
            lambda _: decide_rephrasing(case["original"], case["rephrased"], "", 45.0),
            [""] * 200,
        )
    )


def time_expression_figures() -> None:
    from datetime import UTC, datetime

    finder = TimeExpressionFinder()
    now = datetime.now(UTC)
    finder.find_range("warm-up last week", now)
    questions = [c["text"] for c in load("toxicity.jsonl")] + ["what did we decide last week?"]
    print("Time expressions")
    print(f"  spaCy + resolver time: {timed(lambda q: finder.find_range(q, now), questions)}")


if __name__ == "__main__":
    toxicity_figures()
    injection_figures()
    rephrasing_figures()
    time_expression_figures()
