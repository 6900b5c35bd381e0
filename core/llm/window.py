"""The model's context window: how many tokens a prompt takes, and what fits (pure).

Where the endpoint cannot count with the served model's tokenizer, a prompt is
estimated on the safe side: a token for every three letters or digits of Latin text,
one for every other symbol (code is mostly symbols), and one and a half for every
character outside ASCII (a byte-level tokenizer spends several bytes on them). That
over-counts English by about a third and never under-counts the scripts tried
(tests/unit/test_window.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

# What a chat template adds around each message (role markers, separators).
MESSAGE_OVERHEAD = 8
# A window is never filled to the last token: counts and templates differ a little.
MARGIN = 0.05


def estimate_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """An estimate of the prompt's tokens that does not under-count (see the module)."""
    total = 0
    for message in messages:
        text = str(message.get("content") or "")
        letters = symbols = others = 0
        for char in text:
            if not char.isascii():
                others += 1
            elif char.isalnum():
                letters += 1
            elif not char.isspace():
                symbols += 1
        total += math.ceil(letters / 3) + symbols + math.ceil(others * 1.5) + MESSAGE_OVERHEAD
    return total


def decide_answer_tokens(window: int | None, wanted: int) -> int:
    """Tokens kept for the answer: `wanted`, but never more than a quarter of a window."""
    return wanted if window is None else max(16, min(wanted, window // 4))


def decide_prompt_limit(window: int, answer_tokens: int) -> int:
    """The most tokens a prompt may take in `window`, the answer's own tokens kept free."""
    return int((window - answer_tokens) * (1 - MARGIN))


def decide_sources_share(share: int, prompt_tokens: int, limit: int, bare_tokens: int) -> int:
    """A smaller budget for the sources when the prompt is over `limit`: `share` scaled
    to the room the prompt without sources (`bare_tokens`) leaves, a tenth less for the
    estimate's slack; 0 when there is no room at all."""
    if prompt_tokens <= limit:
        return share
    room, used = limit - bare_tokens, prompt_tokens - bare_tokens
    return max(0, int(share * room / used * 0.9)) if room > 0 and used > 0 else 0
