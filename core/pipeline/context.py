"""Building the answer prompt's data parts, fenced and labelled, within a token budget."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from core.knowledge.documents import Hit, build_place
from core.llm.fencing import fence
from core.llm.tokens import estimate_tokens
from core.requests import ChatLine


def _source_block(n: int, hit: Hit) -> str:
    title = escape(build_place(hit.title, hit.heading), quote=True)
    kind = "room history" if hit.source == "history" else "document"
    return f'<source n="{n}" kind="{kind}" title="{title}">\n{fence(hit.text)}\n</source>'


def passage_cost(hit: Hit) -> int:
    """A passage's tokens in the prompt, with its `<source>` fence and title."""
    return estimate_tokens(_source_block(99, hit))


def build_sources_block(hits: Sequence[Hit], budget: int) -> tuple[str, list[Hit]]:
    """Numbered `<source>` blocks, best first, as many as fit; and the hits they hold."""
    blocks: list[str] = []
    kept: list[Hit] = []
    used = 0
    for hit in hits:
        block = _source_block(len(kept) + 1, hit)
        cost = estimate_tokens(block)
        if kept and used + cost > budget:
            break
        blocks.append(block)
        kept.append(hit)
        used += cost
    return "\n".join(blocks), kept


def build_newest_within(texts: Sequence[str], budget: int) -> str:
    """The newest texts (the last ones) that fit in `budget` tokens, oldest first."""
    picked: list[str] = []
    used = 0
    for text in reversed(texts):
        used += estimate_tokens(text)
        if used > budget:
            break
        picked.insert(0, text)
    return "\n".join(picked)


def build_conversation(lines: Sequence[ChatLine], budget: int) -> str:
    """The most recent lines that fit, oldest first; the bot's lines are marked as its own."""
    texts = [
        f"{'assistant' if line.from_bot else line.sender}: {fence(line.text)}" for line in lines
    ]
    return build_newest_within(texts, budget)
