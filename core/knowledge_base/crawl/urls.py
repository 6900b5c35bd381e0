"""URLs as the crawler decides on them and requests them (pure): one spelling per URL,
the allowed prefixes, and the document id a page's URL gives.

Every decision (the prefixes, robots.txt, the address check) is taken on the normalised
URL, and the fetcher sends exactly that URL, so what is checked is what is requested.
Normalised as RFC 3986 says (section 6.2.2): references resolved (5.2), dot segments
removed, percent-encoding in one form, scheme and host in lower case, no default port;
and as browsers read links: backslashes before the query are slashes, tabs and newlines
are dropped, a host that ends in a number is an IPv4 address (addresses.py)."""

from __future__ import annotations

import hashlib
import ipaddress
import re
import string
from urllib.parse import urlsplit

from core.knowledge.documents import MAX_ID_CHARS
from core.knowledge_base.crawl.addresses import decide_ends_in_number, parse_ipv4

DEFAULT_PORTS = {"http": 80, "https": 443}
# RFC 3986, appendix B: scheme, authority, path, query (None when absent), fragment.
URI = re.compile(r"^(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#.*)?$", re.S)
UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
PATH_CHARS = UNRESERVED | frozenset("!$&'()*+,;=:@/")
QUERY_CHARS = PATH_CHARS | frozenset("?")
HEX = frozenset(string.hexdigits)
NAME = re.compile(r"^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?$")
DROPPED = str.maketrans("", "", "\t\n\r")
# What a server may decode before it resolves dot segments: %2F and %5C as slashes.
ESCAPED_SLASH = re.compile(r"%(?:2F|5C)")


def normalize_url(url: str, base: str = "") -> str | None:
    """`url` (relative to `base`) spelled one way. None: not an http(s) URL the crawler
    requests (another scheme, no host, a bad host or port, a control character)."""
    text = url.strip(" \f\v\x00").translate(DROPPED)
    if any(ord(char) < 32 or ord(char) == 127 for char in text):
        return None
    end = min((text.find(c) for c in "?#" if c in text), default=len(text))
    text = text[:end].replace("\\", "/") + text[end:]
    try:
        resolved = _resolve(text, base)
        if resolved is None:
            return None
        scheme, authority, path, query = resolved
        netloc = _netloc(scheme, authority)
        path = _remove_dot_segments(_percent(path, PATH_CHARS))
        query = _percent(query or "", QUERY_CHARS)
    except (ValueError, UnicodeError):
        return None
    if netloc is None:
        return None
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def _resolve(reference: str, base: str) -> tuple[str, str, str, str | None] | None:
    """RFC 3986 5.2.2 (strict): the target's scheme, authority, path and query."""
    match = URI.match(reference)
    assert match is not None  # every string matches
    scheme, authority, path, query = match.groups()
    if scheme is None:
        if not base:
            return None
        base_match = URI.match(base)
        assert base_match is not None
        scheme, base_authority, base_path, base_query = base_match.groups()
        if authority is None:
            authority = base_authority
            if not path:
                path = base_path
                query = query if query is not None else base_query
            elif not path.startswith("/"):
                path = base_path[: base_path.rfind("/") + 1] + path if base_path else "/" + path
    scheme = scheme.lower()
    if scheme not in DEFAULT_PORTS or authority is None:
        return None
    return scheme, authority, _remove_dot_segments(path), query


def _netloc(scheme: str, authority: str) -> str | None:
    """`host[:port]` in lower case, without credentials (never sent on: they would land
    in logs and citations) or the default port; None when the host or port is bad."""
    host_port = authority.rpartition("@")[2]
    if host_port.startswith("["):
        host, bracket, port_text = host_port[1:].partition("]")
        if not bracket or "%" in host or (port_text and not port_text.startswith(":")):
            return None
        host = f"[{ipaddress.IPv6Address(host).compressed}]"  # ValueError: not IPv6
        port_text = port_text[1:]
    else:
        host, _, port_text = host_port.partition(":")
        host = _host(host)
    if not host:
        return None
    if port_text and not (port_text.isascii() and port_text.isdigit()):
        return None
    port = int(port_text) if port_text else None
    if port is not None and port > 65535:
        return None
    return host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"


def _host(host: str) -> str:
    """A host name in lower-case ASCII (IDNA), or the dotted form of an IPv4 host in any
    spelling; empty when it is neither."""
    if "%" in host or not host:
        return ""
    host = host.lower() if host.isascii() else host.lower().encode("idna").decode("ascii")
    if decide_ends_in_number(host):
        return parse_ipv4(host) or ""
    return host if NAME.match(host) else ""


def _percent(text: str, allowed: frozenset[str]) -> str:
    """Unreserved characters decoded, other escapes in capitals, and every character
    that may not stand in the component escaped as UTF-8 (a stray `%` as `%25`)."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char, pair = text[index], text[index + 1 : index + 3]
        if char == "%" and len(pair) == 2 and set(pair) <= HEX:
            decoded = chr(int(pair, 16))
            out.append(decoded if decoded in UNRESERVED else f"%{pair.upper()}")
            index += 3
            continue
        out.append(char if char in allowed else "".join(f"%{b:02X}" for b in char.encode()))
        index += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4 for an absolute path: `.` and `..` segments resolved, never above
    the root; an empty path is `/`."""
    segments = path.split("/")
    kept: list[str] = []
    for segment in segments[1:] if path.startswith("/") else segments:
        if segment == "..":
            if kept:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    if segments[-1] in (".", ".."):
        kept.append("")
    return "/" + "/".join(kept)


def build_views(url: str) -> tuple[str, ...]:
    """The normalised URL, and the URL as a server sees it that decodes `%2F` and `%5C`
    into slashes, or drops `;parameters` of segments (Tomcat), before it resolves dot
    segments (when that differs): each must pass the rules, or the link is refused."""
    scheme, _, rest = url.partition("://")
    netloc, slash, path_query = rest.partition("/")
    path, mark, query = path_query.partition("?")
    loose = ESCAPED_SLASH.sub("/", path)
    loose = "/".join(segment.split(";", 1)[0] for segment in loose.split("/"))
    view = normalize_url(f"{scheme}://{netloc}{slash}{loose}{mark}{query}")
    return (url,) if view is None or view == url else (url, view)


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a normalised URL."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def host_of(url: str) -> str:
    """The host of a normalised URL (an IPv6 address without its brackets)."""
    netloc = origin_of(url).partition("://")[2]
    if netloc.startswith("["):
        return netloc[1 : netloc.index("]")]
    return netloc.partition(":")[0]


def is_allowed(url: str, prefixes: tuple[str, ...]) -> bool:
    """Whether the (normalised) URL lies under one of the allowed prefixes."""
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
