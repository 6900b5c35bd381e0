"""The slowest tests start first, spread over the workers (pure, plus the pytest hook).

pytest-xdist's work stealing (tests/run.sh) hands each worker a contiguous quarter of the
collection and lets idle workers steal from the busiest queue; a test already running
cannot be stolen. A one-minute test that a worker reaches last keeps the run going while
the others idle, so the tests known to take long are placed at the head of each
worker's share, balanced by their seconds, and the quick tests fill in behind them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

# Seconds each took on the 2-core machine in a whole run with four workers
# (`tests/run.sh --durations=40`, 2026-11-28), by node id prefix; the order within a
# worker's share follows them. Refresh after a test grows past 20 s or shrinks.
SLOW: dict[str, float] = {
    "tests/e2e/test_llama_server.py::test_the_readmes_local_model": 100,
    "tests/e2e/test_local_demo.py::test_the_demo_goes_back": 80,
    "tests/e2e/test_local_demo.py::test_the_demo_runs_once": 65,
    "tests/e2e/test_faults_restart.py::test_a_killed_bot": 60,
    "tests/e2e/test_faults_restart.py::test_a_bot_stopped_mid_answer": 55,
    "tests/e2e/test_faults_homeserver.py::test_after_a_homeserver_outage": 50,
    "tests/e2e/test_scale_out.py::test_a_standby_takes_over_while": 45,
    "tests/e2e/test_scale_out.py::test_a_standby_takes_over_from": 45,
    "tests/knowledge/test_cli.py::test_ingest_a_folder": 40,
    "tests/e2e/test_catchup.py::test_a_digest_comes_once": 38,
    "tests/e2e/test_summaries.py::test_a_scheduled_summary_is_knowledge": 36,
    "tests/e2e/test_scale_out.py::test_documents_put_concurrently": 30,
    "tests/e2e/test_llama_server.py::test_a_real_model_server": 22,
    "tests/knowledge/test_cli.py::test_bad_input": 22,
    "tests/e2e/test_scale_out.py::test_a_document_restricted": 22,
    "tests/e2e/test_lifecycle.py::test_python_dash_m_bot": 20,
    "tests/e2e/test_encryption_integrity.py::test_an_encrypted_rooms_summary": 20,
}


def decide_seconds(node_id: str) -> float:
    """The seconds a test is known to take; 0 for the quick ones."""
    return next((s for prefix, s in SLOW.items() if node_id.startswith(prefix)), 0.0)


def decide_shares(count: int, workers: int) -> list[int]:
    """How many tests each worker gets at first: what xdist's work stealing sends."""
    shares, left = [], count
    for remaining in range(workers, 0, -1):
        shares.append(left // remaining)
        left -= shares[-1]
    return shares


def decide_order(items: Sequence[T], seconds: Sequence[float], workers: int) -> list[T]:
    """The items with the slow ones (seconds > 0) at the head of each worker's share,
    each given to the share with the fewest seconds so far, longest first; the quick
    ones keep their order behind them."""
    slow = sorted((i for i, s in enumerate(seconds) if s > 0), key=lambda i: -seconds[i])
    quick = [item for item, s in zip(items, seconds, strict=True) if s <= 0]
    heads: list[list[T]] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for i in slow:
        share = loads.index(min(loads))
        heads[share].append(items[i])
        loads[share] += seconds[i]
    out: list[T] = []
    for head, size in zip(heads, decide_shares(len(items), workers), strict=True):
        take = max(0, size - len(head))
        out += head + quick[:take]
        del quick[:take]
    return out + quick
