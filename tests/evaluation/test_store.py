"""Evaluation runs on both backends: stored with their results in order."""

from __future__ import annotations

from core.evaluation.store import SqlRunStore


async def test_runs_keep_their_totals_and_results_in_order(open_database):
    store = await SqlRunStore.open(await open_database())
    records = [{"question": f"q{n}", "scores": {"hit@1": n % 2}} for n in range(3)]
    first = await store.add(
        label="base",
        config="{}",
        corpus="docs",
        questions="q.jsonl",
        totals={"hit@1": 0.5},
        records=records,
    )
    second = await store.add(
        label="", config="{}", corpus="docs", questions="q.jsonl", totals={}, records=[]
    )
    assert [(run.id, run.label) for run in await store.runs()] == [(first, "base"), (second, "")]
    assert (await store.run(first)).totals == {"hit@1": 0.5}
    assert await store.records(first) == records
    assert await store.run(999) is None
