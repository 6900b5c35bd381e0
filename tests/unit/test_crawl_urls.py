"""The crawler's URL rules (pure): one spelling per URL (RFC 3986), the views a server
may take of it, the address check, robots.txt (RFC 9309), and which links and redirect
hops are requested."""

from __future__ import annotations

import pytest

from core.knowledge_base.crawl.addresses import decide_public_address
from core.knowledge_base.crawl.rules import (
    build_prefixes,
    decide_link,
    decide_robots,
    decide_support_hop,
    parse_robots,
)
from core.knowledge_base.crawl.urls import build_views, normalize_url

URLS = {
    "fragment and case": ("HTTPS://Docs.Example.org:443/a#part", "", "https://docs.example.org/a"),
    "empty path": ("http://d", "", "http://d/"),
    "other port kept": ("http://d:8080/x?q=1", "", "http://d:8080/x?q=1"),
    "default port": ("http://d:80/", "", "http://d/"),
    "empty port": ("http://d:/a", "", "http://d/a"),
    "relative": ("../b.html", "https://d/docs/a/index.html", "https://d/docs/b.html"),
    "mailto": ("mailto:a@b", "https://d/", None),
    "javascript": ("javascript:void(0)", "https://d/", None),
    "credentials dropped": ("https://user:pw@d/x", "", "https://d/x"),
    "bad port": ("http://d:99999/", "", None),
    "dot segments": ("http://d/docs/x/../private/page", "", "http://d/docs/private/page"),
    "dot segments above the root": ("http://d/docs/../../admin/page", "", "http://d/admin/page"),
    "a trailing dot segment": ("http://d/docs/a/..", "", "http://d/docs/"),
    "percent-encoded dots": ("http://d/docs/%2e%2E/admin", "", "http://d/admin"),
    "relative beyond the root": ("../../x", "http://d/a/b", "http://d/x"),
    "empty segments kept": ("a//b/../c", "http://d/x/", "http://d/x/a//c"),
    "scheme-relative": ("//Other:8080/x", "https://d/a", "https://other:8080/x"),
    "query only": ("?q=1", "http://d/a/b", "http://d/a/b?q=1"),
    "empty reference": ("", "http://d/a?q=1#f", "http://d/a?q=1"),
    "unreserved decoded, others in capitals": (
        "http://d/%7euser/a%2fb%41",
        "",
        "http://d/~user/a%2FbA",
    ),
    "a stray percent": ("http://d/100%", "", "http://d/100%25"),
    "spaces and non-ASCII encoded": ("http://d/a b/é", "", "http://d/a%20b/%C3%A9"),
    "query normalised": ("http://d/a?x=%7e&y=a b&z=[1]", "", "http://d/a?x=~&y=a%20b&z=%5B1%5D"),
    "empty query dropped": ("http://d/a?", "", "http://d/a"),
    "backslashes as a browser reads them": (
        "http://d/docs\\..\\admin?a\\b",
        "",
        "http://d/admin?a%5Cb",
    ),
    "tabs and newlines dropped": ("http://d/a\tb\n", "", "http://d/ab"),
    "a control character": ("http://d/a\x00b", "", None),
    "decimal IPv4": ("http://2130706433/", "", "http://127.0.0.1/"),
    "octal IPv4": ("http://0177.0.0.1/", "", "http://127.0.0.1/"),
    "hexadecimal short IPv4": ("http://0x7F.1:8080/", "", "http://127.0.0.1:8080/"),
    "IPv4 with a trailing dot": ("http://127.0.0.1./", "", "http://127.0.0.1/"),
    "not an IPv4 number": ("http://1.2.3.256/", "", None),
    "a name ending in a number": ("http://example.123/", "", None),
    "IPv6 compressed": ("http://[::FFFF:127.0.0.1]:8080/", "", "http://[::ffff:7f00:1]:8080/"),
    "IPv6 zone": ("http://[fe80::1%25eth0]/", "", None),
    "not IPv6": ("http://[v1.x]/", "", None),
    "international host": ("http://Bücher.example/", "", "http://xn--bcher-kva.example/"),
    "percent in the host": ("http://%6c%6fcalhost/", "", None),
    "space in the host": ("http://a b/", "", None),
}


@pytest.mark.parametrize("url,base,expected", URLS.values(), ids=URLS.keys())
def test_normalize_url(url, base, expected):
    assert normalize_url(url, base) == expected
    if expected:
        assert normalize_url(expected) == expected, "normalising twice changes nothing"


def test_the_views_a_server_may_take_of_a_url():
    assert build_views("http://d/docs/a.html") == ("http://d/docs/a.html",)
    assert build_views("http://d/docs/..%2Fadmin/x?a=%2F") == (
        "http://d/docs/..%2Fadmin/x?a=%2F",
        "http://d/admin/x?a=%2F",
    ), "a server that decodes %2F before resolving dot segments"
    assert build_views("http://d/docs/..%5Cadmin") == ("http://d/docs/..%5Cadmin", "http://d/admin")
    assert build_views("http://d/docs/..;x=1/admin") == (
        "http://d/docs/..;x=1/admin",
        "http://d/admin",
    ), "a server that drops ;parameters first (Tomcat)"


ADDRESSES = {
    "public v4": ("93.184.215.14", True),
    "loopback": ("127.0.0.1", False),
    "private 10/8": ("10.1.2.3", False),
    "private 192.168": ("192.168.1.10", False),
    "cloud metadata (link-local)": ("169.254.169.254", False),
    "unspecified": ("0.0.0.0", False),
    "shared address space": ("100.64.0.1", False),
    "benchmarking": ("198.18.0.1", False),
    "multicast v4": ("224.0.0.1", False),
    "broadcast": ("255.255.255.255", False),
    "v6 loopback": ("::1", False),
    "v6 unspecified": ("::", False),
    "v6 unique local": ("fd00::1", False),
    "v6 site-local": ("fec0::1", False),
    "v6 link-local with a zone": ("fe80::1%eth0", False),
    "v6 multicast": ("ff02::1", False),
    "v6 public": ("2606:4700::1111", True),
    "IPv4-mapped loopback": ("::ffff:127.0.0.1", False),
    "IPv4-mapped public": ("::ffff:93.184.215.14", True),
    "IPv4-translated loopback": ("::ffff:0:127.0.0.1", False),
    "IPv4-compatible loopback": ("::127.0.0.1", False),
    "IPv4-compatible private": ("::10.0.0.1", False),
    "6to4 of loopback": ("2002:7f00:1::", False),
    "6to4 of a private address": ("2002:c0a8:10a::1", False),
    "6to4 of a public address": ("2002:5db8:d70e::1", True),
    "NAT64 of loopback": ("64:ff9b::127.0.0.1", False),
    "NAT64 of the metadata address": ("64:ff9b::a9fe:a9fe", False),
    "NAT64 of a public address": ("64:ff9b::93.184.215.14", True),
    "local-use NAT64": ("64:ff9b:1::93.184.215.14", False),
    "Teredo": ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False),
    "ISATAP of a private address": ("2606:4700::5efe:10.0.0.1", False),
    "not an address": ("docs.example.org", False),
}


@pytest.mark.parametrize("address,public", ADDRESSES.values(), ids=ADDRESSES.keys())
def test_only_public_addresses_are_crawled_by_default(address, public):
    assert decide_public_address(address) is public


PREFIXES = build_prefixes(("http://D:80/docs/", "http://127.0.0.1:8080/", "http://[::1]/"))
LINKS = {
    "under the prefix, a name (checked once resolved)": ("http://d/docs/a", False, None),
    "outside the prefix": ("http://d/admin/a", False, "outside"),
    "out of the prefix by dot segments": ("http://d/docs/../admin/a", False, "outside"),
    "out of the prefix once %2F is decoded": ("http://d/docs/..%2Fadmin/a", False, "outside"),
    "another port": ("http://d:8080/docs/a", False, "outside"),
    "loopback": ("http://127.0.0.1:8080/a", False, "private"),
    "loopback, allowed by the source": ("http://127.0.0.1:8080/a", True, None),
    "decimal loopback": ("http://2130706433:8080/a", False, "private"),
    "octal loopback": ("http://0177.0.0.1:8080/a", False, "private"),
    "hexadecimal loopback": ("http://0x7f000001:8080/a", False, "private"),
    "short loopback": ("http://127.1:8080/a", False, "private"),
    "v6 loopback": ("http://[::1]/a", False, "private"),
}


@pytest.mark.parametrize("url,private,refusal", LINKS.values(), ids=LINKS.keys())
def test_which_links_are_requested(url, private, refusal):
    normalized = normalize_url(url)
    assert normalized is not None
    assert decide_link(normalized, PREFIXES, private) == refusal


IPV6_FORMS = [
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[::127.0.0.1]",
    "[::ffff:0:127.0.0.1]",
    "[2002:7f00:1::]",
    "[64:ff9b::127.0.0.1]",
    "[64:ff9b::a9fe:a9fe]",
    "[::10.0.0.1]",
]


@pytest.mark.parametrize("host", IPV6_FORMS)
def test_ipv6_forms_of_inner_addresses_are_refused(host):
    url = normalize_url(f"http://{host}/docs/a")
    assert url is not None
    assert decide_link(url, build_prefixes((url,)), False) == "private"


def test_redirect_hops_of_robots_txt_and_sitemaps():
    prefixes = build_prefixes(("https://docs.example.org/guide/",))
    origin = "http://d"
    assert decide_support_hop("http://d/sitemaps/a.xml", origin, prefixes, False) is None
    assert (
        decide_support_hop("https://docs.example.org/guide/s.xml", origin, prefixes, False) is None
    )
    assert decide_support_hop("http://other/s.xml", origin, prefixes, False) == "outside"
    assert decide_support_hop("http://d:8080/s.xml", origin, prefixes, True) == "outside"
    loopback = "http://127.0.0.1"
    assert decide_support_hop("http://127.0.0.1/s.xml", loopback, prefixes, False) == "private"
    assert decide_support_hop("http://127.0.0.1/s.xml", loopback, prefixes, True) is None


ROBOTS = """
User-agent: *
Disallow: /*.pdf$
Disallow: /docs/private/
Allow: /docs/private/open.html

User-agent: knowledge-bot
Disallow: /docs/private/
Disallow: /*.pdf$
Allow: /docs/private/open.html
Crawl-delay: 2.5
"""
ROBOT_URLS = {
    "ends in .pdf": ("http://d/a/b.pdf", False),
    "a .pdf with a query ($ anchors)": ("http://d/a/b.pdf?x=1", True),
    "contains .pdf": ("http://d/a/b.pdf.html", True),
    "under a Disallow": ("http://d/docs/private/x", False),
    "the longer Allow wins": ("http://d/docs/private/open.html", True),
    "an escape of the same path": ("http://d/docs/%70rivate/x", False),
    "under a Disallow once %2F is decoded": ("http://d/docs/private%2Fx", False),
    "elsewhere": ("http://d/docs/public/x", True),
}


@pytest.mark.parametrize("url,allowed", ROBOT_URLS.values(), ids=ROBOT_URLS.keys())
def test_robots_txt_rules_of_rfc_9309(url, allowed):
    normalized = normalize_url(url)
    assert normalized is not None
    assert decide_robots(parse_robots(ROBOTS), normalized, "knowledge-bot") is allowed


def test_robots_txt_crawl_delay_and_an_empty_file():
    assert parse_robots(ROBOTS).crawl_delay("knowledge-bot") == 2.5
    assert decide_robots(parse_robots(""), "http://d/anything.pdf", "knowledge-bot")
