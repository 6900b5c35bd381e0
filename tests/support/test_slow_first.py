"""The order that starts the slowest tests first, one share each."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.slow_first import SLOW, decide_order, decide_shares


def test_shares_are_what_work_stealing_sends():
    assert decide_shares(10, 4) == [2, 2, 3, 3]
    assert sum(decide_shares(2170, 4)) == 2170


def test_slow_items_head_the_shares_balanced_by_seconds():
    items = list("abcdefghijkl")
    seconds = [0, 90, 0, 0, 60, 0, 50, 0, 40, 0, 0, 0]
    order = decide_order(items, seconds, workers=4)
    assert sorted(order) == items, "nothing lost or repeated"
    shares = [order[0:3], order[3:6], order[6:9], order[9:12]]
    assert [share[0] for share in shares] == ["b", "e", "g", "i"]
    assert [x for x in order if seconds[items.index(x)] == 0] == list("acdfhjkl")


def test_two_slow_items_go_to_the_lightest_share():
    order = decide_order(list("abcdefgh"), [100, 10, 10, 10, 10, 0, 0, 0], workers=2)
    assert order[:4] == ["a", "f", "g", "h"] and order[4:] == ["b", "c", "d", "e"]


def test_every_slow_test_named_exists():
    """A renamed test would silently lose its place at the head."""
    root = Path(__file__).parents[2]
    for prefix in SLOW:
        path, name = prefix.split("::")
        source = (root / path).read_text()
        assert re.search(rf"^(async )?def {re.escape(name)}", source, re.M), prefix
