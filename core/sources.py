"""The sources listed under an answer: one per document, a paged one (a PDF) naming the
pages its cited passages come from; the answer's Markdown with them (the bot's and the
chat API's)."""

from __future__ import annotations

from collections.abc import Iterable

from core import strings
from core.knowledge.documents import Hit
from core.knowledge.parse.blocks import decide_page, decide_scanned
from core.requests import Answer, Source


def build_page_label(pages: Iterable[int]) -> str:
    """ "p. 4", "pp. 2, 4" or "pp. 2–4"; empty without pages."""
    ordered = sorted(set(pages))
    if not ordered:
        return ""
    if len(ordered) == 1:
        return f"p. {ordered[0]}"
    if ordered == list(range(ordered[0], ordered[-1] + 1)) and len(ordered) > 2:
        return f"pp. {ordered[0]}–{ordered[-1]}"
    return "pp. " + ", ".join(str(page) for page in ordered)


def build_source(hit: Hit, cited: Iterable[Hit] = ()) -> Source:
    """The source of `hit`'s document, with the pages of `cited` (its passages that
    were cited) when the document has pages; those read by OCR say so ("p. 3, read from a
    scan", or "pp. 2–4 (p. 3 read from a scan)" among pages with a text layer)."""
    heads = [h.heading for h in (hit, *cited)]
    pages = [page for heading in heads if (page := decide_page(heading)) is not None]
    scans = {decide_page(heading) for heading in heads if decide_scanned(heading)}
    label = build_page_label(pages)
    if scans and scans == set(pages):
        label = f"{label}, {strings.PAGE_READ_FROM_SCAN}"
    elif scans:
        label = f"{label} ({build_page_label(p for p in scans if p)} {strings.PAGE_READ_FROM_SCAN})"
    title = f"{hit.title}, {label}" if label else hit.title
    return Source(title, hit.url or None, hit.collection, hit.document_id, hit.score)


def build_answer_markdown(answer: Answer) -> str:
    """The answer's text with its sources listed as numbered links under it."""
    if not answer.sources:
        return answer.text
    heading = strings.SOURCES_CONSULTED if answer.uncited else strings.SOURCES_HEADING
    lines = [answer.text, "", heading]
    for number, source in enumerate(answer.sources, start=1):
        title = source.title.replace("[", "(").replace("]", ")")
        lines.append(f"{number}. [{title}]({source.url})" if source.url else f"{number}. {title}")
    return "\n".join(lines)
