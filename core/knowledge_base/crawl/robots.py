"""What a run may request: the rules of rules.py, and robots.txt per origin, fetched once
per run with the run's own client and parsed by Protego (RFC 9309)."""

from __future__ import annotations

import logging

from protego import Protego

from core.knowledge_base.crawl.fetcher import Admit, Fetcher
from core.knowledge_base.crawl.rules import (
    Admission,
    decide_link,
    decide_robots,
    decide_support_hop,
    parse_robots,
)
from core.knowledge_base.crawl.urls import origin_of

log = logging.getLogger(__name__)
MAX_ROBOTS_BYTES = 500_000


class Robots:
    """The rules of each origin a run meets, fetched once per run. An origin whose
    robots.txt did not answer (5xx, timeout, a redirect that is not followed) is unknown:
    its pages count as failed and keep their documents, as Google treats a robots.txt
    that fails."""

    def __init__(
        self,
        fetcher: Fetcher,
        user_agent: str,
        interval: float,
        prefixes: tuple[str, ...],
        private_addresses: bool,
    ) -> None:
        self.fetcher = fetcher
        self.user_agent = user_agent
        self.interval = interval
        self.prefixes = prefixes
        self.private_addresses = private_addresses
        self.requests = 0
        self._rules: dict[str, Protego | None] = {}

    async def admit(self, url: str) -> Admission:
        """Whether a page, link or a page's redirect hop (a normalised URL) is requested:
        the rules first, then its origin's robots.txt (fetched only for a URL that passes
        them)."""
        refusal = decide_link(url, self.prefixes, self.private_addresses)
        if refusal is not None:
            return refusal
        rules = await self.rules(origin_of(url))
        if rules is None:
            return "unknown"
        return "go" if decide_robots(rules, url, self.user_agent) else "disallowed"

    def support(self, url: str) -> Admit:
        """How the redirect hops of robots.txt or a sitemap at `url` are admitted."""
        origin = origin_of(url)

        async def admit(target: str) -> Admission:
            refusal = decide_support_hop(target, origin, self.prefixes, self.private_addresses)
            return refusal or "go"

        return admit

    async def rules(self, origin: str) -> Protego | None:
        """The origin's rules; None: unknown this run."""
        if origin not in self._rules:
            self._rules[origin] = await self._fetch(origin)
        return self._rules[origin]

    async def _fetch(self, origin: str) -> Protego | None:
        url = f"{origin}/robots.txt"
        fetched = await self.fetcher.get(
            url, interval=self.interval, limit=MAX_ROBOTS_BYTES, admit=self.support(url)
        )
        self.requests += fetched.requests
        if fetched.status == 200 and not fetched.too_large:
            return parse_robots(fetched.body.decode("utf-8", "replace"))
        if 400 <= fetched.status < 500 and fetched.status != 429:
            # No robots.txt (or none for us): everything may be fetched.
            return parse_robots("")
        log.warning(
            "crawl: %s did not answer (%s); its pages wait for the next run", url, fetched.why
        )
        return None

    def any_unknown(self) -> bool:
        """Whether some origin's robots.txt did not answer this run."""
        return any(rules is None for rules in self._rules.values())

    def crawl_delay(self, origin: str) -> float | None:
        rules = self._rules.get(origin)
        return rules.crawl_delay(self.user_agent) if rules is not None else None
