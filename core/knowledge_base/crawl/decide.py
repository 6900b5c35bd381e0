"""The crawler's decisions (pure): what a response means for the page's document, which
pages a run removes, what a conditional request sends, and when a source is due."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from apscheduler.triggers.cron import CronTrigger

from core.config.summaries import parse_schedule

PageKind = Literal["html", "pdf", "docx"]
Verdict = Literal["index", "unchanged", "remove", "failed"]
MEDIA_KINDS: dict[str, PageKind] = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
}
# Answers that say the page is gone for good; any other failure may pass.
GONE = frozenset({404, 410})


@dataclass(frozen=True)
class PageState:
    """What the store remembers of a page (by the URL the crawler asked for)."""

    url: str
    doc_id: str
    etag: str = ""
    last_modified: str = ""
    body_hash: str = ""
    # Its links to follow, kept for runs where it answers 304 or fails for a while.
    links: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answer:
    """A fetch as the decisions see it. status 0: no answer (timeout, refused, reset)."""

    status: int
    final_url: str = ""
    body_hash: str = ""
    content_type: str = ""
    # False: the page redirects to a URL the rules refuse (rules.py), which is not
    # requested; every hop that was requested passed them.
    allowed: bool = True
    too_large: bool = False


def kind_of(content_type: str) -> PageKind | None:
    """The kind of page by its Content-Type; None: not indexed (images, archives…)."""
    return MEDIA_KINDS.get(content_type.split(";")[0].strip().lower())


def conditional_headers(previous: PageState | None) -> dict[str, str]:
    """If-None-Match / If-Modified-Since from the validators the page last sent."""
    headers: dict[str, str] = {}
    if previous and previous.etag:
        headers["If-None-Match"] = previous.etag
    if previous and previous.last_modified:
        headers["If-Modified-Since"] = previous.last_modified
    return headers


def decide_page(previous: PageState | None, answer: Answer, doc_id: str) -> Verdict:
    """What the answer does to the page's document (`doc_id`: that of the final URL).

    A transient failure (no answer, 429, 5xx) or an unexpected one (401, 403, a page
    too large) keeps the document: only 404/410, a page that redirects out of the allowed
    prefixes, under a Disallow or to an inner address, or one that is no longer
    HTML/PDF/DOCX removes it."""
    status = answer.status
    if status == 304:
        return "unchanged" if previous else "failed"
    if status in GONE or not answer.allowed:
        return "remove"
    if status != 200:  # a 3xx without a Location, 401, 403, 429, 5xx, no answer
        return "failed"
    if kind_of(answer.content_type) is None:
        return "remove"
    if answer.too_large:
        return "failed"
    if previous and previous.body_hash == answer.body_hash and previous.doc_id == doc_id:
        return "unchanged"
    return "index"


def decide_removals(
    known: Mapping[str, str], reached: set[str], discovery_complete: bool
) -> list[str]:
    """Known pages (URL to document id) that a finished run did not reach: gone from the
    sitemap, no longer linked, now disallowed or outside the prefixes. None when some
    discovery failed (a sitemap that did not answer), since unreached is then unknown."""
    if not discovery_complete:
        return []
    return sorted(url for url in known if url not in reached)


def decide_orphans(removed: Mapping[str, str], remaining: Mapping[str, str]) -> list[str]:
    """The document ids of removed pages (URL to id) that no remaining page still gives
    (two URLs that redirect to one page share its document)."""
    kept = set(remaining.values())
    return sorted({doc_id for doc_id in removed.values() if doc_id not in kept})


def decide_interval(requests_per_second: float, crawl_delay: float | None) -> float:
    """Seconds between two requests: the source's rate, or robots.txt's Crawl-delay when
    that is slower."""
    return max(1.0 / requests_per_second, crawl_delay or 0.0)


def next_run_at(schedule: str, last_finished: float | None) -> float:
    """When a source crawls next: at once if it never finished a run, else the schedule's
    first time after the last finish (a crontab in the machine's time zone, as the room
    summaries' schedules)."""
    parsed = parse_schedule(schedule)
    if last_finished is None or parsed is None:
        return 0.0
    if parsed.seconds is not None:
        return last_finished + parsed.seconds
    trigger = CronTrigger.from_crontab(parsed.crontab or "")
    after = datetime.fromtimestamp(last_finished, trigger.timezone)
    fire = trigger.get_next_fire_time(None, after)
    # A fire time equal to the finish is the run just done.
    while fire is not None and fire.timestamp() <= last_finished:
        fire = trigger.get_next_fire_time(fire, fire)
    return fire.timestamp() if fire else float("inf")


def decide_due(schedule: str, last_finished: float | None, in_progress: bool, now: float) -> bool:
    """Whether a source should crawl now: a run left unfinished (a restart) goes on at
    once; otherwise when the schedule says."""
    return in_progress or now >= next_run_at(schedule, last_finished)
