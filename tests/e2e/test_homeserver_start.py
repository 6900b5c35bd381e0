"""Starting the tests' and the demo's Synapse (bot/dev/synapse.py) when its port is
taken between its choice and the start: two demos in two folders starting at once both
chose the free preferred port, and the one whose Synapse could not bind read the
other's as ready, whose registration refused its secret (HTTP 403)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.dev.synapse import Homeserver, ensure_synapse_venv, start_homeserver

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def test_a_port_another_synapse_took_gives_way_to_a_free_one(homeserver: Homeserver, tmp_path):
    python = ensure_synapse_venv(Path(os.environ.get("SYNAPSE_VENV", ROOT / ".venv-synapse")))
    taken = int(homeserver.url.rsplit(":", 1)[1])
    ours = start_homeserver(tmp_path / "synapse", python, taken)
    try:
        assert ours.url != homeserver.url
        assert ours.register("demo", "a long enough password").startswith("@demo:")
    finally:
        ours.stop()
