"""Citation markers: `[n]` may only point to a source that was given; the rest are removed.

The model is asked to cite with `[1]`, `[2]`, or `[1, 3]`; models cite in their own styles
too, and those are read the same way: `[Source 1]`, `[source1]`, `[Sources 1, 2]`,
`[1-3]`, `[^1]`, `【1】` and `(Source 1)`. Markers are renumbered in the order they first
appear, so the answer cites 1, 2, 3… and the source list under it holds exactly the
cited sources, each rendered as a link. Given a `key` (the document a chunk belongs to),
markers of two chunks of one document become one number, so that the list names each
document once. Footnote definitions (`[^1]: …` lines) go: the source list replaces them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

Item = TypeVar("Item")

WORD = r"(?:sources?|src|refs?|doc(?:ument)?s?)\s*:?\s*"
ONE = rf"(?:{WORD})?\d+(?:\s*[-–]\s*\d+)?"
NUMBERS = rf"{ONE}(?:\s*[,;]\s*(?:and\s+)?{ONE})*"
MARKER = re.compile(
    rf"\s?(?:\[(?:\^|{WORD})?(?P<bracket>{NUMBERS})\](?!\()"
    rf"|【(?:{WORD})?(?P<lenticular>{NUMBERS})】"
    rf"|\({WORD}(?P<paren>{NUMBERS})\))",
    re.IGNORECASE,
)
# A marker still being written at the end of a stream ("[So", "【1"), or a last line that
# may be a footnote definition ("[^2]" becomes "[^2]: …", which goes): held back until it
# closes, so that what is shown of a stream only ever grows.
UNCLOSED = re.compile(r"\s*(?:(?:\[|【|\()[^\[\]【】()\n]{0,24}|(?:(?<=\n)|\A)\[\^[^\n]*)$")
FOOTNOTE_DEFINITION = re.compile(r"^\[\^\d+\]:.*(?:\n|$)", re.MULTILINE)
RANGE = re.compile(r"(\d+)\s*[-–]\s*(\d+)")


def parse_marker_numbers(inside: str, largest: int) -> list[int]:
    """The numbers a marker names, ranges spelled out (up to `largest`: a range is never
    longer than the sources given)."""
    numbers: list[int] = []
    for part in re.split(r"[,;]", inside):
        if found := RANGE.search(part):
            first, last = int(found.group(1)), int(found.group(2))
            numbers += range(first, min(last, max(first, largest)) + 1)
        elif digits := re.search(r"\d+", part):
            numbers.append(int(digits.group()))
    return numbers


def build_cited_text(
    text: str,
    sources: Sequence[Item],
    key: Callable[[Item], Hashable] | None = None,
    on_cite: Callable[[Item], None] | None = None,
) -> tuple[str, list[Item]]:
    """The text with valid markers renumbered and invalid ones removed, and the cited
    sources (the first cited item of each `key`); `on_cite` sees every cited item (the
    pages of a document that were cited, say)."""
    order: dict[Hashable, int] = {}
    first: dict[Hashable, Item] = {}

    def replace(match: re.Match[str]) -> str:
        numbers = []
        inside = match.group("bracket") or match.group("lenticular") or match.group("paren")
        for given in parse_marker_numbers(inside, len(sources)):
            if 1 <= given <= len(sources):
                item = sources[given - 1]
                if on_cite is not None:
                    on_cite(item)
                name = key(item) if key else given
                first.setdefault(name, item)
                order.setdefault(name, len(order) + 1)
                numbers.append(order[name])
        if not numbers:
            return ""
        leading = match.group(0)[: len(match.group(0)) - len(match.group(0).lstrip())]
        return leading + "".join(f"[{n}]" for n in dict.fromkeys(numbers))

    cited_text = MARKER.sub(replace, FOOTNOTE_DEFINITION.sub("", text)).rstrip()
    cited = [first[name] for name in sorted(order, key=order.__getitem__)]
    return cited_text, cited


def build_streamed_text(
    text: str, sources: Sequence[Item], key: Callable[[Item], Hashable] | None = None
) -> str:
    """The cited text of a stream so far: markers already renumbered as in the final
    text, a marker not yet closed held back. Each call's text continues the last's as
    long as the model writes on."""
    return build_cited_text(UNCLOSED.sub("", text), sources, key)[0]
