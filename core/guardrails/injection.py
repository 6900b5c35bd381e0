"""Known prompt-injection patterns: attempts to change the bot's instructions or read them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

# Each names a tactic seen in public injection collections; matched case-insensitively.
SHIPPED_PATTERNS: dict[str, str] = {
    "ignore instructions": (
        r"\b(ignore|disregard|forget|override|bypass)\b[^.?!]{0,40}\b"
        r"(instructions?|prompts?|rules|guidelines|directives|guardrails|context)\b"
    ),
    "reveal prompt": (
        r"\b(reveal|show|print|repeat|output|display|tell me|what (is|are)|give me|leak)\b"
        r"[^.?!]{0,30}\b(system|initial|hidden|original|secret)\s+"
        r"(prompts?|instructions?|message|rules)\b"
    ),
    "new persona": (
        r"\b(you are now|from now on,? you|act as (an? )?(unrestricted|unfiltered|jailbroken|dan)"
        r"|pretend (to be|you are)|roleplay as)\b"
    ),
    "jailbreak mode": (
        r"\b(enable|activate|enter|switch to|turn on|in)\s+(developer|god|dan|jailbreak"
        r"|unrestricted|sudo)\s+mode\b"
    ),
    "instructions as text": (
        r"\b(translate|summari[sz]e|rewrite|paraphrase|encode|spell out)\s+(all\s+)?your\s+"
        r"(system\s+)?(instructions|prompts?|rules|guidelines)\b"
    ),
    "fake system turn": (
        r"(^|\n)\s*(system|assistant)\s*:|<\|?(system|im_start|im_end)\|?>|\[/?INST\]"
    ),
    "other rooms": (
        r"\b(messages?|content|documents?|history|conversations?) (from|of|in) "
        r"(another|other|all|every) (rooms?|users?|channels?)\b"
        r"|\b(other|another) (users?|people|rooms?) (asked|said|wrote|told)\b"
        r"|\bwhat did (the )?(other|another) (users?|people|rooms?)\b"
    ),
}


class InjectionDetector:
    """Finds the first known pattern in a text; admins may add their own patterns."""

    def __init__(self, extra_patterns: Iterable[str] = ()) -> None:
        named = dict(SHIPPED_PATTERNS)
        named.update({f"configured: {p}": p for p in extra_patterns})
        self.patterns = {name: re.compile(p, re.IGNORECASE) for name, p in named.items()}

    def find(self, text: str) -> str | None:
        """The name of the first pattern found in `text`, or None."""
        for name, pattern in self.patterns.items():
            if pattern.search(text):
                return name
        return None


@lru_cache(maxsize=4)
def configured_detector(extra_patterns: tuple[str, ...]) -> InjectionDetector:
    """The detector of the shipped patterns and the configured ones, compiled once for
    each config's patterns."""
    return InjectionDetector(extra_patterns)
