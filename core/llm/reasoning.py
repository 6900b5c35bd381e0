"""A model's reasoning, kept out of what people read (pure).

Reasoning models write their chain of thought inline when the server does not split it
off (DeepSeek-R1 distills and Qwen3 through Ollama, llama.cpp, or vLLM without
`--reasoning-parser`): in `<think>`, `<thinking>` or `<reasoning>` blocks; and newer R1
templates open the tag in the prompt, so the reply holds only the closing tag, after
the reasoning. Everything in such a block, and everything before a lone closing tag,
is reasoning. (Reasoning sent in a separate `reasoning_content` field never reaches the
text: the client reads `content` only.)

While a reply streams in, what may be shown is decided on the text so far: an open
block hides the rest, a tag being written is held back, and a model known to open its
tag in the prompt shows nothing until it closes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TAG_NAMES = ("think", "thinking", "reasoning")
NAMES = "|".join(TAG_NAMES)
OPEN = re.compile(rf"<({NAMES})>", re.IGNORECASE)
CLOSE = re.compile(rf"</({NAMES})>", re.IGNORECASE)
BLOCK = re.compile(rf"<({NAMES})>.*?</\1>", re.IGNORECASE | re.DOTALL)
UNCLOSED = re.compile(rf"<({NAMES})>.*\Z", re.IGNORECASE | re.DOTALL)
TAGS = tuple(f"<{slash}{name}>" for name in TAG_NAMES for slash in ("", "/"))
LONGEST_TAG = max(len(tag) for tag in TAGS)


@dataclass(frozen=True)
class Reasoned:
    """A reply split into what may be shown and how much reasoning was left out."""

    text: str
    reasoning_chars: int
    # The reply closed a tag it never opened: the template opens it in the prompt.
    closed_alone: bool = False


def _tag_being_written(text: str) -> int:
    """How many characters at the end of `text` may be the start of a tag."""
    start = text.rfind("<", max(0, len(text) - LONGEST_TAG))
    if start < 0:
        return 0
    tail = text[start:].lower()
    return len(tail) if any(tag.startswith(tail) for tag in TAGS) else 0


def parse_reasoning(raw: str, *, final: bool = True, opens_in_prompt: bool = False) -> Reasoned:
    """What of `raw` may be shown: without reasoning blocks, without what comes before a
    lone closing tag. `final`: the whole reply (else the text so far of a stream, where
    an unfinished block or tag, and with `opens_in_prompt` everything before the closing
    tag, is held back). A final reply with `opens_in_prompt` and no closing tag had no
    reasoning: it is shown whole."""
    text, closed_alone = raw, False
    first_close, first_open = CLOSE.search(text), OPEN.search(text)
    if first_close and (first_open is None or first_close.start() < first_open.start()):
        text, closed_alone = text[first_close.end() :], True
    elif opens_in_prompt and not final and first_close is None:
        starts_with_tag = first_open is not None and not text[: first_open.start()].strip()
        if not starts_with_tag:
            text = ""
    text = UNCLOSED.sub("", BLOCK.sub("", text))
    reasoning = len(raw) - len(text)
    if not final:
        text = text[: len(text) - _tag_being_written(text)]
    return Reasoned(text.strip() if final else text.lstrip(), reasoning, closed_alone)
