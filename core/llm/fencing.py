"""Data fenced for a prompt: between the tags the prompts use (core/llm/prompts.toml), it
can neither close a fence early nor open one of its own."""

from __future__ import annotations

import re

# The tags the prompts use to fence data (core/llm/prompts.toml).
FENCE_TAGS = re.compile(
    r"<(/?)(?=(sources?|memor(?:y|ies)|conversation|question|answer|messages|summaries"
    r"|expected)\b)",
    re.IGNORECASE,
)


def fence(text: str) -> str:
    """Data as it may go between fence tags: it can neither close a fence early nor open
    one of its own (`</source>` becomes `</ source>`)."""
    return FENCE_TAGS.sub(lambda m: f"<{m.group(1)} ", text)
