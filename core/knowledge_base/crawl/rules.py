"""Which URLs a crawl run requests (pure). A page, a link and every redirect hop is a URL
of its own, normalised first (urls.py), and requested only when

- it lies under the allowed prefixes,
- its host is no inner address, unless the source sets `private_addresses` (an address
  is checked here; a name once it is resolved, by the fetcher's resolver),
- and its origin's robots.txt allows it (RFC 9309, parsed by Protego: `*` and `$`
  patterns, the longest match wins, an Allow wins a tie);

each checked on every view a server may take of the URL (`build_views`). robots.txt and
sitemaps, which are not pages, may be redirected within their own origin or under the
prefixes, with the same address check."""

from __future__ import annotations

import ipaddress
from typing import Literal

from protego import Protego

from core.knowledge_base.crawl.addresses import decide_public_address
from core.knowledge_base.crawl.urls import (
    build_views,
    host_of,
    is_allowed,
    normalize_url,
    origin_of,
)

Refusal = Literal["outside", "private", "disallowed"]
# What a run makes of a URL: "go", a refusal, or "unknown" (its origin's robots.txt did
# not answer this run: the page counts as failed and keeps its document).
Admission = Literal["go", "outside", "private", "disallowed", "unknown"]
REDIRECTS = frozenset({301, 302, 303, 307, 308})
REASONS: dict[str, str] = {
    "outside": "outside the allowed prefixes",
    "private": "an inner address (see private_addresses)",
    "disallowed": "disallowed by robots.txt",
    "unknown": "its robots.txt did not answer",
}


def build_prefixes(prefixes: tuple[str, ...]) -> tuple[str, ...]:
    """The allowed prefixes, normalised as the URLs they are compared with (a prefix that
    does not normalise, which the config refuses anyway, is kept as written)."""
    return tuple(dict.fromkeys(normalize_url(prefix) or prefix for prefix in prefixes))


def decide_address(url: str, private_addresses: bool) -> bool:
    """Whether the host of a normalised URL may be requested: any host when the source
    allows private addresses; else a host written as an address must be public (a name
    is checked once resolved)."""
    if private_addresses:
        return True
    host = host_of(url)
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return True
    return decide_public_address(host)


def decide_link(url: str, prefixes: tuple[str, ...], private_addresses: bool) -> Refusal | None:
    """Why a page, link or a page's redirect hop is not requested; None: it may be, if
    robots.txt allows it (`decide_robots`)."""
    if not all(is_allowed(view, prefixes) for view in build_views(url)):
        return "outside"
    if not decide_address(url, private_addresses):
        return "private"
    return None


def decide_support_hop(
    url: str, origin: str, prefixes: tuple[str, ...], private_addresses: bool
) -> Refusal | None:
    """Why a redirect hop of robots.txt or a sitemap of `origin` is not followed; None:
    it is (it stays on that origin or goes under the prefixes)."""
    if origin_of(url) != origin and not all(
        is_allowed(view, prefixes) for view in build_views(url)
    ):
        return "outside"
    if not decide_address(url, private_addresses):
        return "private"
    return None


def parse_robots(text: str) -> Protego:
    """An origin's robots.txt; an empty text allows everything."""
    return Protego.parse(text)


def decide_robots(rules: Protego, url: str, user_agent: str) -> bool:
    """Whether robots.txt lets `user_agent` fetch the normalised URL, in every view."""
    return all(rules.can_fetch(view, user_agent) for view in build_views(url))
