"""A text's tokens, roughly, where the model's tokenizer is not at hand: the budgets of a
prompt's parts (sources, conversation, a summary's messages) and the counts the metrics
and the evaluation report. A whole prompt against the context window is estimated on the
safe side instead (core/llm/window.py)."""

from __future__ import annotations


def estimate_tokens(text: str) -> int:
    """About four characters a token, for any model (its tokenizer is on the GPU host)."""
    return len(text) // 4 + 1
