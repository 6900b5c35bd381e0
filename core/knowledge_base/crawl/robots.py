"""robots.txt per origin, read with the standard library's parser and fetched with the
run's own client (urllib's own `read()` would block the event loop)."""

from __future__ import annotations

import logging
from urllib.robotparser import RobotFileParser

from core.knowledge_base.crawl.fetcher import Fetcher

log = logging.getLogger(__name__)
MAX_ROBOTS_BYTES = 500_000


class Robots:
    """The rules of each origin a run meets, fetched once per run. An origin whose
    robots.txt did not answer (5xx, timeout) is unknown: its pages count as failed and
    keep their documents, as Google treats a robots.txt that fails."""

    def __init__(self, fetcher: Fetcher, user_agent: str, interval: float) -> None:
        self.fetcher = fetcher
        self.user_agent = user_agent
        self.interval = interval
        self.requests = 0
        self._rules: dict[str, RobotFileParser | None] = {}

    async def rules(self, origin: str) -> RobotFileParser | None:
        """The origin's rules; None: unknown this run."""
        if origin not in self._rules:
            self._rules[origin] = await self._fetch(origin)
        return self._rules[origin]

    async def _fetch(self, origin: str) -> RobotFileParser | None:
        url = f"{origin}/robots.txt"
        fetched = await self.fetcher.get(url, interval=self.interval, limit=MAX_ROBOTS_BYTES)
        self.requests += fetched.requests
        parser = RobotFileParser(url)
        if fetched.status == 200 and not fetched.too_large:
            parser.parse(fetched.body.decode("utf-8", "replace").splitlines())
            return parser
        if 400 <= fetched.status < 500 and fetched.status != 429:
            # No robots.txt (or none for us): everything may be fetched.
            parser.parse([])
            return parser
        log.warning("crawl: %s did not answer (%s); its pages wait for the next run", url,
                    fetched.error or fetched.status)  # fmt: skip
        return None

    async def can_fetch(self, url: str, origin: str) -> bool | None:
        """Whether robots.txt lets us fetch `url`; None: unknown this run."""
        rules = await self.rules(origin)
        return None if rules is None else rules.can_fetch(self.user_agent, url)

    def any_unknown(self) -> bool:
        """Whether some origin's robots.txt did not answer this run."""
        return any(rules is None for rules in self._rules.values())

    def crawl_delay(self, origin: str) -> float | None:
        rules = self._rules.get(origin)
        delay = rules.crawl_delay(self.user_agent) if rules else None
        return float(delay) if delay is not None else None
