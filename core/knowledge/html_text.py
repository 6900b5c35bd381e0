"""HTML to text blocks (headings with their level, and paragraphs), with the standard library."""

from __future__ import annotations

import re
from html.parser import HTMLParser

HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
BLOCKS = {"p", "li", "pre", "blockquote", "tr", "div", "section", "article", "dd", "dt", "br"}
SKIPPED = {"script", "style", "nav", "header", "footer", "noscript", "template"}


class _BlockParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[int, str]] = []
        self._text: list[str] = []
        self._level = 0
        self._skipping = 0

    def _flush(self) -> None:
        text = re.sub(r"\s+", " ", "".join(self._text)).strip()
        if text:
            self.blocks.append((self._level, text))
        self._text = []
        self._level = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in SKIPPED:
            self._skipping += 1
        elif tag in HEADINGS:
            self._flush()
            self._level = HEADINGS[tag]
        elif tag in BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED:
            self._skipping = max(0, self._skipping - 1)
        elif tag in HEADINGS or tag in BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self._text.append(data)


def html_to_blocks(html: str) -> list[tuple[int, str]]:
    """(heading level, text) per block; level 0 is a paragraph."""
    parser = _BlockParser()
    parser.feed(html)
    parser.close()
    parser._flush()
    return parser.blocks
