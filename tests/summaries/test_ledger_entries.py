"""Which line of a decision's point the ledger keeps (ledger_entries.decide_stated_decision)."""

from __future__ import annotations

import pytest

from core.summaries.draft import SummaryLine
from core.summaries.ledger_entries import decide_stated_decision
from core.summaries.salience import Pick


def chat(*texts: str) -> list[SummaryLine]:
    return [
        SummaryLine(n, "@a:x", text, 1e9 + 60 * n, f"https://l/{n}", f"$e{n}")
        for n, text in enumerate(texts)
    ]


@pytest.mark.parametrize(
    ("texts", "main", "stated"),
    [
        # The main line names nothing; the decision said after it names what was asked.
        (
            (
                "Postgres or MongoDB for the reporting service?",
                "Decided then. Who writes the migration plan?",
                "We go with Postgres for the reporting service.",
            ),
            1,
            2,
        ),
        # A proposal turned down before the main line is not what was decided.
        (
            (
                "Postgres or MongoDB for the reporting service?",
                "Let's go with MongoDB for the reporting service.",
                "Hm, joins would hurt.",
                "Agreed. We go with Postgres then.",
            ),
            3,
            3,
        ),
        # The main line already says it: it stays on a tie.
        (
            (
                "Which day for the release?",
                "We decided: the release moves to Tuesday.",
                "We go with it.",
            ),
            1,
            1,
        ),
    ],
)
def test_decide_stated_decision(texts, main, stated):
    lines = chat(*texts)
    pick = Pick("decision", tuple(range(main, len(texts))), main)
    point = Pick("decision", tuple(range(len(texts))), main)
    assert decide_stated_decision(pick, lines, [point]) == stated


def test_an_arrangement_keeps_its_main_line():
    lines = chat("Who calls the vendor?", "Sam calls the vendor on Monday.", "We go with Sam.")
    pick = Pick("arrangement", (1, 2), 1)
    assert decide_stated_decision(pick, lines, [Pick("arrangement", (0, 1, 2), 1)]) == 1
