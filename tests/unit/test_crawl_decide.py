"""The crawler's pure parts: decisions, sitemaps, pages, document ids, the frontier; and
the config of a crawled source (URLs and the rules on them: test_crawl_urls.py)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from core.config import ConfigError, parse_config
from core.knowledge.documents import id_problem
from core.knowledge_base.crawl.decide import (
    Answer,
    PageState,
    conditional_headers,
    decide_due,
    decide_interval,
    decide_orphans,
    decide_page,
    decide_removals,
    next_run_at,
)
from core.knowledge_base.crawl.frontier import Entry, Frontier
from core.knowledge_base.crawl.page import read_page
from core.knowledge_base.crawl.sitemap import NotASitemap, parse_sitemap
from core.knowledge_base.crawl.urls import document_id, is_sitemap_url

KNOWN = PageState("https://d/a", "https://d/a", etag='"1"', body_hash="h1")
HTML = "text/html; charset=utf-8"

PAGES = {
    "new page": (None, Answer(200, "https://d/a", "h1", HTML), "index"),
    "same bytes": (KNOWN, Answer(200, "https://d/a", "h1", HTML), "unchanged"),
    "new bytes": (KNOWN, Answer(200, "https://d/a", "h2", HTML), "index"),
    "not modified": (KNOWN, Answer(304, "https://d/a"), "unchanged"),
    "404": (KNOWN, Answer(404, "https://d/a"), "remove"),
    "410": (KNOWN, Answer(410, "https://d/a"), "remove"),
    "503 is not a removal": (KNOWN, Answer(503, "https://d/a"), "failed"),
    "no answer": (KNOWN, Answer(0), "failed"),
    "429": (KNOWN, Answer(429, "https://d/a"), "failed"),
    "403 is kept": (KNOWN, Answer(403, "https://d/a"), "failed"),
    "redirected out of the prefixes": (
        KNOWN,
        Answer(200, "https://x/a", "h1", HTML, allowed=False),
        "remove",
    ),
    "a redirect that is not followed": (KNOWN, Answer(301, "https://x/a", allowed=False), "remove"),
    "no longer a page": (KNOWN, Answer(200, "https://d/a", "h1", "image/png"), "remove"),
    "a PDF": (None, Answer(200, "https://d/a.pdf", "h1", "application/pdf"), "index"),
    "too large": (KNOWN, Answer(200, "https://d/a", "h9", HTML, too_large=True), "failed"),
}


@pytest.mark.parametrize("previous,answer,verdict", PAGES.values(), ids=PAGES.keys())
def test_decide_page(previous, answer, verdict):
    assert decide_page(previous, answer, document_id(answer.final_url or "https://d/a")) == verdict


def test_same_bytes_at_another_final_url_are_indexed_there():
    assert decide_page(KNOWN, Answer(200, "https://d/b", "h1", HTML), "https://d/b") == "index"


def test_conditional_headers():
    assert conditional_headers(None) == {}
    both = PageState("u", "u", etag='"x"', last_modified="Wed, 01 May 2024 00:00:00 GMT")
    assert conditional_headers(both) == {
        "If-None-Match": '"x"',
        "If-Modified-Since": "Wed, 01 May 2024 00:00:00 GMT",
    }


def test_removals_only_when_discovery_was_complete():
    known = {"a": "a", "b": "b", "c": "c"}
    assert decide_removals(known, {"a", "c", "z"}, True) == ["b"]
    assert decide_removals(known, {"a"}, False) == []


def test_a_document_two_urls_give_stays_while_one_does():
    assert decide_orphans({"old": "doc"}, {"other": "doc"}) == []
    assert decide_orphans({"old": "doc", "x": "x"}, {"other": "doc"}) == ["x"]


def test_interval_and_crawl_delay():
    assert decide_interval(2, None) == 0.5
    assert decide_interval(2, 3) == 3
    assert decide_interval(1000, 0) == 0.001


def test_schedules():
    assert next_run_at("every 4h", None) == 0
    assert next_run_at("every 4h", 1000.0) == 1000 + 4 * 3600
    finished = datetime(2024, 5, 1, 3, 0).timestamp()  # at the cron time itself
    assert datetime.fromtimestamp(next_run_at("cron: 0 3 * * *", finished)) == datetime(
        2024, 5, 2, 3, 0
    )
    assert decide_due("every 1d", 1000.0, False, 1000 + 86399) is False
    assert decide_due("every 1d", 1000.0, False, 1000 + 86400) is True
    assert decide_due("every 1d", 1000.0, True, 1001) is True, "an unfinished run goes on"


def test_sitemaps():
    urlset = b"""<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <url><loc> https://d/a </loc><lastmod>2024-05-01</lastmod></url><url><loc>https://d/b</loc></url>
      </urlset>"""
    found = parse_sitemap(urlset)
    assert (found.kind, [(e.loc, e.lastmod) for e in found.entries]) == (
        "urlset",
        [("https://d/a", "2024-05-01"), ("https://d/b", "")],
    )
    index = b"<sitemapindex><sitemap><loc>https://d/s.xml</loc></sitemap></sitemapindex>"
    assert parse_sitemap(index).kind == "sitemapindex"
    for bad in (b"<html></html>", b"not xml", b""):
        with pytest.raises(NotASitemap):
            parse_sitemap(bad)


def test_a_sitemap_with_entities_is_refused():
    bomb = b"""<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>
      <urlset><url><loc>&b;</loc></url></urlset>"""
    with pytest.raises(NotASitemap):
        parse_sitemap(bomb)


def test_document_ids_are_stable_and_valid():
    long = "https://d/" + "x" * 1000
    assert document_id("https://d/a") == "https://d/a"
    assert document_id(long) == document_id(long) != document_id(long + "y")
    assert id_problem(document_id(long)) is None
    assert is_sitemap_url("https://d/sitemap.XML") and not is_sitemap_url("https://d/start.html")


def test_read_page_title_and_links():
    html = """<html><head><title> The
      handbook\u202e </title><base href="/docs/"></head><body>
      <a href="a.html#x">A</a><a href="a.html">again</a><a href="mailto:x@y">mail</a>
      <a rel="nofollow" href="secret.html">s</a><a href="https://other/x">o</a></body></html>"""
    page = read_page(html, "https://d/index.html")
    assert page.title == "The handbook"
    assert page.links == ("https://d/docs/a.html", "https://other/x")
    assert read_page('<meta name="robots" content="noindex, nofollow">', "https://d/").nofollow


def test_the_frontier_is_breadth_first_and_bounded():
    frontier = Frontier(3, done=["a"], queued=[Entry("b", False)])
    assert frontier.add("b", True) is False, "taken already"
    assert frontier.add("c", True) is True
    assert frontier.add("d", True) is False, "the limit counts what is done"
    assert [frontier.pop(), frontier.pop(), frontier.pop()] == [
        Entry("b", False),
        Entry("c", True),
        None,
    ]


MATRIX = '[matrix]\nhomeserver = "http://h"\nuser_id = "@b:h"\npassword = "p"\n'
CRAWLED = '[sources.site]\ncrawl = ["https://docs.example.org/sitemap.xml"]\n'
CONFIG_ERRORS = {
    "crawl keys without crawl": (
        '[sources.wiki]\ntoken = "t"\nmax_pages = 5\n',
        "sources.wiki: max_pages: only for a crawled source",
    ),
    "not a URL": (
        '[sources.site]\ncrawl = ["docs.example.org"]\n',
        "sources.site.crawl: 'docs.example.org' is not an http",
    ),
    "bad schedule": (
        CRAWLED + 'schedule = "sometimes"\n',
        "sources.site.schedule: 'sometimes': write",
    ),
    "empty schedule": (CRAWLED + 'schedule = ""\n', "a crawled source needs a schedule"),
    "rate": (
        CRAWLED + "requests_per_second = 0\n",
        "sources.site.requests_per_second: Input should be greater than 0",
    ),
    "two collections": (
        CRAWLED
        + '[collections.a]\nsource = "site"\npublic = true\n[collections.b]\nsource = "site"\npublic = true\n',
        "collections: sources.site.crawl: a crawled source owns exactly one collection; 2 name it (a, b)",
    ),
    "no collection": (
        CRAWLED + '[sources.wiki]\ntoken = "t"\n[collections.a]\nsource = "wiki"\n',
        "sources.site.crawl: a crawled source owns exactly one collection; 0 name it",
    ),
    "no collections at all": (
        CRAWLED,
        "collections: sources.site.crawl: a crawled source owns exactly one collection; 0 name it",
    ),
    "not public without rights_url": (
        CRAWLED + '[collections.docs]\nsource = "site"\n',
        "collections: docs.public: must be true",
    ),
    "an API source still needs a token": (
        "[sources.wiki]\n",
        "sources.wiki: give exactly one of token or token_env",
    ),
}


@pytest.mark.parametrize("text,expected", CONFIG_ERRORS.values(), ids=CONFIG_ERRORS.keys())
def test_crawl_config_errors_name_the_key(text, expected):
    with pytest.raises(ConfigError) as caught:
        parse_config(MATRIX + text, origin="bot.toml", env={}, base_dir=Path("/srv"))
    assert any(expected in problem for problem in caught.value.problems), caught.value.problems


def test_a_crawled_source_needs_no_token_and_may_be_private_with_rights_url():
    text = MATRIX + CRAWLED + '[collections.docs]\nsource = "site"\npublic = true\n'
    settings = parse_config(text, origin="bot.toml", env={}, base_dir=Path("/srv"))
    source = settings.sources["site"]
    assert source.api_token() == ""
    assert source.allowed_prefixes() == ("https://docs.example.org/",)
    other = text.replace(
        "crawl =", 'allow = ["HTTPS://Docs.Example.org", "https://docs.example.org/g?"]\ncrawl ='
    )
    assert parse_config(other, origin="b", env={}, base_dir=Path("/srv")).sources[
        "site"
    ].allowed_prefixes() == ("https://docs.example.org/", "https://docs.example.org/g"), (
        "an origin alone admits no other host that starts like it"
    )
    private = text.replace("public = true", "public = false").replace(
        "crawl =", 'rights_url = "https://docs.example.org/rights"\ncrawl ='
    )
    assert (
        parse_config(private, origin="b", env={}, base_dir=Path("/srv")).collections["docs"].public
        is False
    )
