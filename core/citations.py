"""Citation markers: `[n]` may only point to a source that was given; the rest are removed.

The model is asked to cite with `[1]`, `[2]`, or `[1, 3]`. Markers are renumbered in
the order they first appear, so the answer cites 1, 2, 3… and the source list under it
holds exactly the cited sources, each rendered as a link.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

Item = TypeVar("Item")

MARKER = re.compile(r"\s?\[(\d+(?:\s*,\s*\d+)*)\]")


def build_cited_text(text: str, sources: Sequence[Item]) -> tuple[str, list[Item]]:
    """The text with valid markers renumbered and invalid ones removed, and the cited sources."""
    order: dict[int, int] = {}

    def replace(match: re.Match[str]) -> str:
        numbers = []
        for part in match.group(1).split(","):
            given = int(part)
            if 1 <= given <= len(sources):
                order.setdefault(given, len(order) + 1)
                numbers.append(order[given])
        if not numbers:
            return ""
        leading = match.group(0)[: len(match.group(0)) - len(match.group(0).lstrip())]
        return leading + "".join(f"[{n}]" for n in dict.fromkeys(numbers))

    cited_text = MARKER.sub(replace, text)
    cited = [sources[given - 1] for given in sorted(order, key=order.get)]
    return cited_text, cited
