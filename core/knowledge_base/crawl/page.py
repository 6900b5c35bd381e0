"""What the crawler reads from an HTML page besides its text (pure): the title and the
links to follow. The text itself goes through the HTML path of the indexer
(core/knowledge/parse/html_text.py)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from html.parser import HTMLParser

from core.knowledge_base.crawl.urls import normalize_url

MAX_TITLE_CHARS = 1000
# Embeddings and overrides of the text direction (as the ingestion API refuses them).
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


@dataclass(frozen=True)
class PageLinks:
    title: str
    links: tuple[str, ...]
    # <meta name="robots" content="nofollow">: its links are not followed.
    nofollow: bool = False


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: list[str] = []
        self.in_title = False
        self.base = ""
        self.hrefs: list[str] = []
        self.nofollow = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "title" and not self.title:
            self.in_title = True
        elif tag == "base" and not self.base:
            self.base = found.get("href", "")
        elif tag == "a" and "href" in found and "nofollow" not in found.get("rel", "").lower():
            self.hrefs.append(found["href"])
        elif tag == "meta" and found.get("name", "").lower() == "robots":
            self.nofollow = "nofollow" in found.get("content", "").lower()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)


def clean_title(text: str) -> str:
    """One printable line (the ingestion API's rule for titles), at most 1000 characters."""
    kept = "".join(
        " " if unicodedata.category(char) in ("Cc", "Zl", "Zp") else char
        for char in text
        if char not in BIDI_CONTROLS
    )
    return re.sub(r"\s+", " ", kept).strip()[:MAX_TITLE_CHARS]


def read_page(html: str, url: str) -> PageLinks:
    """The page's `<title>` (cleaned, possibly empty) and its links, absolute and
    normalized (see urls.py), in page order without repeats."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    base = normalize_url(reader.base, url) if reader.base else url
    links = (normalize_url(href, base or url) for href in reader.hrefs)
    unique = tuple(dict.fromkeys(link for link in links if link))
    return PageLinks(clean_title("".join(reader.title)), unique, reader.nofollow)
