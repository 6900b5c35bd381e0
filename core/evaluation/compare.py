"""Two runs side by side: per question and in total (text), and the distributions of
their scores (a PNG)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.evaluation.store import Run


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def build_comparison(
    first: Run, second: Run, first_records: Sequence[dict], second_records: Sequence[dict]
) -> str:
    """Totals of both runs and their difference, then every question whose scores differ."""
    lines = [f"run {first.id} ({first.label}) vs run {second.id} ({second.label})", ""]
    lines.append(
        f"{'score':<24}{'run ' + str(first.id):>10}{'run ' + str(second.id):>10}{'change':>10}"
    )
    for key in sorted(set(first.totals) | set(second.totals)):
        a, b = first.totals.get(key), second.totals.get(key)
        change = f"{b - a:+.2f}" if a is not None and b is not None else "-"
        lines.append(f"{key:<24}{_cell(a):>10}{_cell(b):>10}{change:>10}")
    lines += ["", "questions whose scores changed:"]
    by_question = {r["question"]["question"]: r for r in first_records}
    changed = 0
    for record in second_records:
        text = record["question"]["question"]
        before = by_question.get(text)
        if before is None:
            continue
        scores = sorted(set(before["scores"]) | set(record["scores"]))
        keys = [k for k in scores if before["scores"].get(k) != record["scores"].get(k)]
        if keys:
            changed += 1
            diffs = ", ".join(
                f"{k} {_cell(before['scores'].get(k))} -> {_cell(record['scores'].get(k))}"
                for k in keys
            )
            lines.append(f"- {text}: {diffs}")
    if not changed:
        lines.append("- none")
    return "\n".join(lines)


def write_plot(runs: Sequence[tuple[Run, Sequence[dict[str, Any]]]], path: Path) -> list[str]:
    """Box plots of each score's distribution per run; returns the scores drawn."""
    import matplotlib

    matplotlib.use("Agg")  # no display on servers
    import matplotlib.pyplot as plt

    keys = sorted({k for _, records in runs for r in records for k in r["scores"]} - {"refused"})
    figure, axes = plt.subplots(1, len(keys), figsize=(max(4, 2.2 * len(keys)), 4), squeeze=False)
    for axis, key in zip(axes[0], keys, strict=True):
        values = [[r["scores"][key] for r in records if key in r["scores"]] for _, records in runs]
        axis.boxplot(values, showmeans=True)
        axis.set_xticks(range(1, len(runs) + 1), [f"run {run.id}" for run, _ in runs])
        axis.set_title(key, fontsize=9)
        axis.set_ylim(-0.05, 1.05)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return keys
