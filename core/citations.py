"""Citation markers: `[n]` may only point to a source that was given; the rest are removed.

The model is asked to cite with `[1]`, `[2]`, or `[1, 3]`. Markers are renumbered in
the order they first appear, so the answer cites 1, 2, 3… and the source list under it
holds exactly the cited sources, each rendered as a link. Given a `key` (the document a
chunk belongs to), markers of two chunks of one document become one number, so that the
list names each document once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

Item = TypeVar("Item")

MARKER = re.compile(r"\s?\[(\d+(?:\s*,\s*\d+)*)\]")


def build_cited_text(
    text: str, sources: Sequence[Item], key: Callable[[Item], Hashable] | None = None
) -> tuple[str, list[Item]]:
    """The text with valid markers renumbered and invalid ones removed, and the cited
    sources (the first cited item of each `key`)."""
    order: dict[Hashable, int] = {}
    first: dict[Hashable, Item] = {}

    def replace(match: re.Match[str]) -> str:
        numbers = []
        for part in match.group(1).split(","):
            given = int(part)
            if 1 <= given <= len(sources):
                item = sources[given - 1]
                name = key(item) if key else given
                first.setdefault(name, item)
                order.setdefault(name, len(order) + 1)
                numbers.append(order[name])
        if not numbers:
            return ""
        leading = match.group(0)[: len(match.group(0)) - len(match.group(0).lstrip())]
        return leading + "".join(f"[{n}]" for n in dict.fromkeys(numbers))

    cited_text = MARKER.sub(replace, text)
    cited = [first[name] for name in sorted(order, key=order.__getitem__)]
    return cited_text, cited
