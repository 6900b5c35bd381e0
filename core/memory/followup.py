"""When a question needs the previous turn: rules with word lists, as DIVA does.

By default a question stands alone, so that the model does not answer the previous
question again. A reply to the bot, a message in its thread, or "again" and "amend"
words mark a follow-up. Memory is suspended after a toxic or out-of-scope turn, so that
nothing of it leaks into the next answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.memory.store import Turn

SUSPENDING_OUTCOMES = frozenset({"toxic", "out_of_scope", "injection"})


@dataclass(frozen=True)
class FollowupDecision:
    use_previous: bool
    reason: str


def find_word(text: str, words: Sequence[str]) -> str | None:
    """The first of `words` (or phrases) that appears in `text` as whole words."""
    lowered = text.lower()
    for word in words:
        if re.search(rf"(?<!\w){re.escape(word.lower())}(?!\w)", lowered):
            return word
    return None


def decide_followup(
    text: str,
    *,
    in_bot_conversation: bool,
    previous: Turn | None,
    again_words: Sequence[str],
    amend_words: Sequence[str],
) -> FollowupDecision:
    """Whether the question is read with the previous turn and the recent lines."""
    if previous is not None and previous.outcome in SUSPENDING_OUTCOMES:
        return FollowupDecision(False, f"suspended: the previous turn was {previous.outcome}")
    if in_bot_conversation:
        return FollowupDecision(True, "a reply to the bot, or in its thread")
    if previous is None:
        return FollowupDecision(False, "no previous turn")
    if word := find_word(text, again_words):
        return FollowupDecision(True, f"again: {word!r}")
    if word := find_word(text, amend_words):
        return FollowupDecision(True, f"amend: {word!r}")
    return FollowupDecision(False, "no follow-up words")
