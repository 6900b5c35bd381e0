"""HTML to blocks with the standard library: headings, paragraphs, and lists, tables and
code kept as units. Navigation (menus, generated "Prev / Up / Next" bars) and the
page's <head> are left out, so that no chunk is a menu or a lone title."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from core.knowledge.parse.blocks import Block

HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
BREAKS = {"p", "div", "section", "article", "blockquote", "dd", "dt", "br", "main", "aside"}
SKIPPED = {"script", "style", "nav", "header", "footer", "noscript", "template", "head"}
# Classes of generated navigation (DocBook's navheader/navfooter, tables of contents).
NAVIGATION = re.compile(r"\b(nav\w*|toc|breadcrumbs?|skip-?link\w*)\b", re.IGNORECASE)
CONTAINERS = {"ul": "list", "ol": "list", "table": "table", "pre": "code"}


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


class _BlockParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self._text: list[str] = []
        self._level = 0
        self._skip: tuple[str, int] | None = None  # (tag, nesting) of the skipped element
        self._container: list[str] = []  # open ul/ol/table/pre, outermost first
        self._parts: list[str] = []  # the outermost container's items, rows or lines
        self._header = 0
        self._term = ""  # a <dt> waiting for its <dd>

    def _flush(self) -> None:
        text = _flat("".join(self._text))
        self._text = []
        level, self._level = self._level, 0
        if not text:
            return
        if level:
            self._term = ""
            self.blocks.append(Block("heading", (text,), level))
        else:
            text = f"{self._term}: {text}" if self._term else text
            self._term = ""
            self.blocks.append(Block("text", (text,)))

    def _end_part(self) -> None:
        """An item, row or code block ends: its text becomes a part of the container."""
        raw = "".join(self._text)
        self._text = []
        if CONTAINERS[self._container[0]] == "code":
            self._parts += raw.strip("\n").splitlines()
        elif text := _flat(raw):
            self._parts.append(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip:
            if tag == self._skip[0]:
                self._skip = (tag, self._skip[1] + 1)
            return
        found = dict(attrs)
        if (
            tag in SKIPPED
            or NAVIGATION.search(found.get("class") or "")
            or (found.get("role") == "navigation")
        ):
            self._skip = (tag, 1)
            return
        if self._container:
            if tag in CONTAINERS:
                self._container.append(tag)
            elif tag in ("li", "tr") and self._container[0] != "pre":
                self._end_part()
            elif tag in ("td", "th") and self._text:
                self._text.append(" | ")
            elif tag in BREAKS:
                self._text.append(" ")
            return
        if tag in CONTAINERS:
            self._flush()
            self._container = [tag]
            self._parts = []
        elif tag in HEADINGS:
            self._flush()
            self._level = HEADINGS[tag]
        elif tag in BREAKS:
            if tag == "dd":
                self._term = _flat("".join(self._text)) or self._term
                self._text = []
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if self._skip:
            if tag == self._skip[0]:
                depth = self._skip[1] - 1
                self._skip = (tag, depth) if depth else None
            return
        if self._container:
            if tag == "thead" and self._container[0] == "table":
                self._end_part()
                self._header = len(self._parts)
            if tag in CONTAINERS and self._container[-1] == tag:
                self._container.pop()
                if not self._container:
                    self._close_container(tag)
            return
        if tag in HEADINGS:
            self._flush()
        elif tag in BREAKS and tag != "dt":
            self._flush()

    def _close_container(self, tag: str) -> None:
        self._container = [tag]
        self._end_part()
        kind = CONTAINERS[tag]
        parts = tuple(self._parts)
        header = self._header or (1 if kind == "table" and len(parts) > 1 else 0)
        self._container, self._parts, self._header = [], [], 0
        if parts:
            self.blocks.append(Block(kind, parts, header=header if kind == "table" else 0))  # type: ignore[arg-type]

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self._text.append(data)


def html_to_blocks(html: str) -> list[Block]:
    """The page's blocks in order; headings carry their level (h1 = 1)."""
    parser = _BlockParser()
    parser.feed(html)
    parser.close()
    if parser._container:
        parser._close_container(parser._container[0])
    parser._flush()
    return parser.blocks
