"""The crawler's HTTP (aiohttp): one request at a time per source, spaced by the polite
interval, with a size limit. Each request sends exactly the normalised URL (urls.py; the
client is told not to re-encode it), and redirects are followed here, one hop at a time:
each hop is a new URL that the caller admits or refuses (rules.py) before it is
requested. Every failure is an answer with status 0, never an exception: the decisions
(decide.py) say what it means."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

import aiohttp
import aiohttp.abc
from aiohttp.abc import ResolveResult
from yarl import URL

from core.knowledge_base.crawl.addresses import decide_public_address
from core.knowledge_base.crawl.rules import REASONS, REDIRECTS, Admission, decide_address
from core.knowledge_base.crawl.urls import normalize_url

log = logging.getLogger(__name__)

TIMEOUT = aiohttp.ClientTimeout(total=60, sock_connect=15, sock_read=30)
MAX_REDIRECTS = 10
CHUNK_BYTES = 64 * 1024
# Whether a redirect hop may be requested (rules.py, with robots.txt where it applies).
Admit = Callable[[str], Awaitable[Admission]]


@dataclass(frozen=True)
class Fetched:
    url: str  # the URL of the answer: the last one requested
    status: int  # 0: no answer (timeout, connection refused or reset, too many redirects)
    body: bytes = b""
    content_type: str = ""
    charset: str | None = None
    etag: str = ""
    last_modified: str = ""
    too_large: bool = False
    requests: int = 1  # HTTP requests it took: the redirects count
    error: str = ""
    # A redirect that was not followed: where it led, and why (rules.py's refusal).
    refused_url: str = ""
    refused: str = ""

    @property
    def why(self) -> str:
        """What kept it from being a page, for the log."""
        if self.refused:
            return f"it redirects to {self.refused_url}, {REASONS[self.refused]}"
        return self.error or str(self.status)


class PrivateAddress(aiohttp.ClientError):
    """A host on a loopback, private or link-local address, which the source does not
    allow (`private_addresses`)."""


class PublicResolver(aiohttp.abc.AbstractResolver):
    """Resolves names to their public addresses only: a page, a sitemap entry or a
    redirect to a name that resolves inside the network is refused. (A host written as
    an address is checked before the request, see rules.py.)"""

    def __init__(self) -> None:
        self._inner = aiohttp.ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        public = [entry for entry in found if decide_public_address(entry["host"])]
        if not public:
            raise PrivateAddress(f"{host} resolves to no public address")
        return public

    async def close(self) -> None:
        await self._inner.close()


class Fetcher:
    """Made per run (it holds the run's connection pool); close it when the run ends."""

    def __init__(self, user_agent: str, private_addresses: bool = False) -> None:
        connector = None if private_addresses else aiohttp.TCPConnector(resolver=PublicResolver())
        self.private_addresses = private_addresses
        self._session = aiohttp.ClientSession(
            timeout=TIMEOUT,
            headers={"User-Agent": user_agent},
            raise_for_status=False,
            connector=connector,
        )
        self._next_at = 0.0

    async def close(self) -> None:
        await self._session.close()

    async def _pace(self, interval: float) -> None:
        """Wait until `interval` seconds after the previous request began."""
        loop = asyncio.get_running_loop()
        wait = self._next_at - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        self._next_at = max(loop.time(), self._next_at) + interval

    async def get(
        self,
        url: str,
        *,
        interval: float,
        limit: int,
        admit: Admit,
        headers: dict[str, str] | None = None,
    ) -> Fetched:
        """GET the normalised `url` (with conditional `headers`, sent again at each hop),
        reading at most `limit` bytes of body; a redirect hop is requested only when
        `admit` lets it (the first URL is the caller's to admit)."""
        current, requests = url, 0
        for _ in range(MAX_REDIRECTS + 1):
            if not decide_address(current, self.private_addresses):
                return Fetched(current, 0, requests=requests, error=REASONS["private"])
            await self._pace(interval)
            requests += 1
            try:
                fetched, location = await self._request(current, limit, headers or {})
            except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                # ValueError: a URL aiohttp cannot use.
                error = f"{type(exc).__name__}: {exc}"
                return Fetched(current, 0, requests=requests, error=error)
            if location is None:
                return replace(fetched, requests=requests)
            target = normalize_url(location, current)
            admission: Admission = "outside" if target is None else await admit(target)
            if admission == "unknown":
                return Fetched(current, 0, requests=requests, error=REASONS["unknown"])
            if admission != "go":
                return Fetched(
                    current,
                    fetched.status,
                    requests=requests,
                    refused_url=target or location,
                    refused=admission,
                )
            assert target is not None
            current = target
        return Fetched(current, 0, requests=requests, error="too many redirects")

    async def _request(
        self, url: str, limit: int, headers: dict[str, str]
    ) -> tuple[Fetched, str | None]:
        """One request: its answer, and the Location of a redirect (else None)."""
        async with self._session.get(
            URL(url, encoded=True), headers=headers, allow_redirects=False
        ) as response:
            found = Fetched(
                url,
                response.status,
                content_type=response.headers.get("Content-Type", ""),
                charset=response.charset,
                etag=response.headers.get("ETag", ""),
                last_modified=response.headers.get("Last-Modified", ""),
            )
            location = response.headers.get("Location")
            if response.status in REDIRECTS and location is not None:
                return found, location
            if response.status != 200:
                return found, None
            body = await _read_at_most(response, limit)
            return replace(found, too_large=True) if body is None else replace(
                found, body=body
            ), None


async def _read_at_most(response: aiohttp.ClientResponse, limit: int) -> bytes | None:
    """The body, or None past `limit` bytes (stopped there, not read on)."""
    declared = response.content_length
    if declared is not None and declared > limit:
        return None
    parts: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(CHUNK_BYTES):
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
    return b"".join(parts)
