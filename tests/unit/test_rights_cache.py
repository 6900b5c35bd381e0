"""Rights decisions: per document version, expiring, and swept so they cannot pile up."""

from __future__ import annotations

from core.rights.cache import SWEEP_AT, DecisionCache


def test_a_decision_holds_for_its_version_until_it_expires():
    now = [0.0]
    cache = DecisionCache(clock=lambda: now[0])
    cache.put("wiki", "alice", ("wiki", "budget"), "v1", True, 60)
    assert cache.get("wiki", "alice", ("wiki", "budget"), "v1") is True
    assert cache.get("wiki", "alice", ("wiki", "budget"), "v2") is None, "a new version"
    assert cache.get("wiki", "bob", ("wiki", "budget"), "v1") is None
    now[0] = 61
    assert cache.get("wiki", "alice", ("wiki", "budget"), "v1") is None


def test_expired_decisions_of_many_documents_are_swept_out():
    now = [0.0]
    cache = DecisionCache(clock=lambda: now[0])
    for n in range(SWEEP_AT - 1):
        cache.put("wiki", "alice", ("wiki", f"d{n}"), "v1", True, 60)
    now[0] = 61
    for n in range(3):
        cache.put("wiki", "alice", ("wiki", f"new{n}"), "v1", True, 60)
    assert len(cache) == 3, "the sweep left the live ones only"
