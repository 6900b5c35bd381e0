"""A document as a sequence of blocks: the unit the chunker packs and never cuts when
it fits. Markdown and HTML parsers produce them; plain text is paragraphs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

BlockKind = Literal["heading", "text", "code", "list", "table"]


@dataclass(frozen=True)
class Block:
    """`parts` are the pieces a block may be cut into when it is longer than a chunk:
    one paragraph (cut at sentences), a code block's lines, a list's items, a table's
    rows (the first `header` rows are repeated in every piece)."""

    kind: BlockKind
    parts: tuple[str, ...]
    level: int = 0
    header: int = 0

    @property
    def text(self) -> str:
        return JOINERS[self.kind].join(self.parts)


JOINERS: dict[BlockKind, str] = {
    "heading": " ",
    "text": " ",
    "code": "\n",
    "list": "\n",
    "table": "\n",
}


def text_blocks(text: str) -> list[Block]:
    """Plain text: blank-line separated paragraphs."""
    return [Block("text", (p.strip(),)) for p in re.split(r"\n\s*\n", text) if p.strip()]


PAGE_HEADING = re.compile(r"^p\. (\d+)( \(scan\))?$")
# Starts a page of paged text that OCR read (core/knowledge/parse/extraction.py): a
# control character no text layer keeps (the reader takes it out of theirs).
SCANNED_MARK = "\x1a"


def paged_blocks(text: str) -> list[Block]:
    """Pages separated by form feeds: each page a section headed "p. N" ("p. N (scan)"
    when OCR read it), so that every chunk stays within its page and says which it is
    (see `decide_page`, `decide_scanned`)."""
    blocks: list[Block] = []
    for number, page in enumerate(text.split("\f"), start=1):
        scanned = page.startswith(SCANNED_MARK)
        page = page.replace(SCANNED_MARK, "")
        if page.strip():
            heading = f"p. {number} (scan)" if scanned else f"p. {number}"
            blocks += [Block("heading", (heading,), 1), *text_blocks(page)]
    return blocks


def decide_page(heading: str) -> int | None:
    """The page of a chunk of a paged document, from its section's heading."""
    match = PAGE_HEADING.match(heading)
    return int(match.group(1)) if match else None


def decide_scanned(heading: str) -> bool:
    """Whether a chunk of a paged document was read by OCR from a scanned page."""
    match = PAGE_HEADING.match(heading)
    return bool(match and match.group(2))
