"""Sitemaps (pure): a `<urlset>` lists pages, a `<sitemapindex>` lists further sitemaps,
both with an optional `<lastmod>` (https://www.sitemaps.org/protocol.html).

Parsed with defusedxml: a sitemap comes from outside, and entity expansion ("billion
laughs") or external entities must not cost memory or reach files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

# The protocol's limit per file; more are ignored rather than read.
MAX_ENTRIES = 50_000


class NotASitemap(ValueError):
    """The bytes are not a sitemap; the message says why (for the log)."""


@dataclass(frozen=True)
class SitemapEntry:
    loc: str
    lastmod: str = ""


@dataclass(frozen=True)
class Sitemap:
    kind: Literal["urlset", "sitemapindex"]
    entries: tuple[SitemapEntry, ...]


def _local(tag: str) -> str:
    """A tag without its namespace: sitemaps in the wild use the protocol's namespace,
    an old one, or none."""
    return tag.rsplit("}", 1)[-1]


def _child_text(element: Element, name: str) -> str:
    for child in element:
        if _local(child.tag) == name:
            return (child.text or "").strip()
    return ""


def parse_sitemap(data: bytes) -> Sitemap:
    """The entries of a sitemap or sitemap index; NotASitemap when it is neither."""
    try:
        root = fromstring(data)
    except (ParseError, DefusedXmlException) as exc:
        raise NotASitemap(f"not readable XML: {exc}") from None
    kind = _local(root.tag)
    if kind not in ("urlset", "sitemapindex"):
        raise NotASitemap(f"the root element is <{kind}>, not <urlset> or <sitemapindex>")
    item = "url" if kind == "urlset" else "sitemap"
    entries = []
    for child in root:
        if _local(child.tag) != item:
            continue
        loc = _child_text(child, "loc")
        if loc:
            entries.append(SitemapEntry(loc, _child_text(child, "lastmod")))
        if len(entries) >= MAX_ENTRIES:
            break
    return Sitemap("urlset" if kind == "urlset" else "sitemapindex", tuple(entries))
