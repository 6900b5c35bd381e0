"""The crawler's HTTP (aiohttp): one request at a time per source, spaced by the polite
interval, with a size limit, following redirects. Every failure is an answer with
status 0, never an exception: the decisions (decide.py) say what it means."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from dataclasses import dataclass

import aiohttp
import aiohttp.abc
from aiohttp.abc import ResolveResult

from core.knowledge_base.crawl.urls import decide_public_address

log = logging.getLogger(__name__)

TIMEOUT = aiohttp.ClientTimeout(total=60, sock_connect=15, sock_read=30)
MAX_REDIRECTS = 10
CHUNK_BYTES = 64 * 1024


@dataclass(frozen=True)
class Fetched:
    url: str  # the final URL, after redirects
    status: int  # 0: no answer (timeout, connection refused or reset, too many redirects)
    body: bytes = b""
    content_type: str = ""
    charset: str | None = None
    etag: str = ""
    last_modified: str = ""
    too_large: bool = False
    requests: int = 1  # HTTP requests it took: the redirects count
    error: str = ""


class PrivateAddress(aiohttp.ClientError):
    """A host on a loopback, private or link-local address, which the source does not
    allow (`private_addresses`)."""


class PublicResolver(aiohttp.abc.AbstractResolver):
    """Resolves names to their public addresses only: a page, a sitemap entry or a
    redirect to a name that resolves inside the network is refused."""

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


async def _refuse_private_literal(
    session: aiohttp.ClientSession, context: object, params: aiohttp.TraceRequestStartParams
) -> None:
    """Each request, redirects included: a host written as an IP address is not resolved,
    so it is checked here."""
    host = params.url.host or ""
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return  # a name: the resolver checks it
    if not decide_public_address(host.strip("[]")):
        raise PrivateAddress(f"{host} is not a public address")


class Fetcher:
    """Made per run (it holds the run's connection pool); close it when the run ends."""

    def __init__(self, user_agent: str, private_addresses: bool = False) -> None:
        connector, traces = None, []
        if not private_addresses:
            connector = aiohttp.TCPConnector(resolver=PublicResolver())
            trace = aiohttp.TraceConfig()
            trace.on_request_start.append(_refuse_private_literal)
            traces.append(trace)
        self._session = aiohttp.ClientSession(
            timeout=TIMEOUT, headers={"User-Agent": user_agent}, raise_for_status=False,
            connector=connector, trace_configs=traces,
        )  # fmt: skip
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
        self, url: str, *, interval: float, limit: int, headers: dict[str, str] | None = None
    ) -> Fetched:
        """GET `url` (with conditional `headers`), reading at most `limit` bytes of body."""
        await self._pace(interval)
        try:
            async with self._session.get(
                url, headers=headers or {}, allow_redirects=True, max_redirects=MAX_REDIRECTS
            ) as response:
                requests = len(response.history) + 1
                found = dict(
                    url=str(response.url),
                    status=response.status,
                    content_type=response.headers.get("Content-Type", ""),
                    charset=response.charset,
                    etag=response.headers.get("ETag", ""),
                    last_modified=response.headers.get("Last-Modified", ""),
                    requests=requests,
                )
                if response.status != 200:
                    return Fetched(**found)  # type: ignore[arg-type]
                body = await _read_at_most(response, limit)
                if body is None:
                    return Fetched(**found, too_large=True)  # type: ignore[arg-type]
                return Fetched(**found, body=body)  # type: ignore[arg-type]
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            # ValueError: a URL or redirect aiohttp cannot use.
            return Fetched(url, 0, error=f"{type(exc).__name__}: {exc}")


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
