"""URLs as the crawler compares them (pure): one spelling per page, the allowed prefixes,
and the document id a page's URL gives."""

from __future__ import annotations

import hashlib
import ipaddress
from urllib.parse import urljoin, urlsplit, urlunsplit

from core.knowledge.documents import MAX_ID_CHARS

DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_url(url: str, base: str = "") -> str | None:
    """`url` (relative to `base`) spelled one way: lower-case scheme and host, no default
    port, no fragment, `/` for an empty path. None: not an http(s) page link."""
    try:
        joined = urljoin(base, url.strip()) if base else url.strip()
        parts = urlsplit(joined)
        port = parts.port
    except ValueError:  # a bracketed host that is not an IP address, a port out of range
        return None
    if parts.scheme.lower() not in DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != DEFAULT_PORTS[parts.scheme.lower()]:
        host = f"{host}:{port}"
    # Credentials in a link are never sent on (they would land in logs and citations).
    normalized = urlunsplit((parts.scheme.lower(), host, parts.path or "/", parts.query, ""))
    if any(char.isspace() or ord(char) < 32 or ord(char) == 127 for char in normalized):
        return None
    return normalized


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a normalized URL."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def is_allowed(url: str, prefixes: tuple[str, ...]) -> bool:
    """Whether the (normalized) URL lies under one of the allowed prefixes."""
    return any(url.startswith(prefix) for prefix in prefixes)


def document_id(url: str) -> str:
    """The id of the page's document: its URL, so that logs, the status API and a rights
    application read it; a URL too long for an id keeps its start and a hash of the whole."""
    if len(url) <= MAX_ID_CHARS:
        return url
    digest = hashlib.sha256(url.encode()).hexdigest()[:32]
    return f"{url[: MAX_ID_CHARS - len(digest) - 1]}#{digest}"


def is_sitemap_url(url: str) -> bool:
    """A crawl URL whose path ends in .xml is read as a sitemap; any other as a start page
    (decided before fetching, so that a start page costs one request)."""
    return urlsplit(url).path.lower().endswith(".xml")


def decide_public_address(address: str) -> bool:
    """Whether an IP address is on the public internet (not loopback, private,
    link-local such as a cloud's metadata address, or reserved)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    return ip.is_global and not ip.is_multicast
