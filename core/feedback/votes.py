"""Which reactions are votes, and how votes move documents in the ranking (pure)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

Vote = Literal["up", "down"]

# Skin tones (U+1F3FB-U+1F3FF) and the emoji variation selector (U+FE0F) are dropped
# before matching; the shortcodes are what some clients and bridges send instead.
_MODIFIERS = re.compile("[\U0001f3fb-\U0001f3ff\ufe0f]")
_VOTES: dict[str, Vote] = {
    "\U0001f44d": "up",
    ":+1:": "up",
    "+1": "up",
    ":thumbsup:": "up",
    ":thumbs_up:": "up",
    "\U0001f44e": "down",
    ":-1:": "down",
    "-1": "down",
    ":thumbsdown:": "down",
    ":thumbs_down:": "down",
}


def parse_vote(key: str) -> Vote | None:
    """The vote a reaction key stands for, or None for any other reaction."""
    return _VOTES.get(_MODIFIERS.sub("", key.strip()))


def decide_adjustments(
    counts: Mapping[tuple[str, str], tuple[int, int]],
    *,
    up_step: float,
    down_step: float,
    max_up: float,
    max_down: float,
) -> dict[tuple[str, str], float]:
    """A factor per document from its (up, down) votes: 1 + up_step per 👍 - down_step per
    👎, kept within [1 - max_down, 1 + max_up]. Documents with no votes are left out."""
    factors = {}
    for document, (up, down) in counts.items():
        change = up * up_step - down * down_step
        factors[document] = 1.0 + min(max_up, max(-max_down, change))
    return factors
