"""Reading real PDF and Word files: their text, pages, sections and tables, and one
sentence saying why a file cannot be read."""

from __future__ import annotations

import pytest

from core.knowledge.parse.blocks import decide_page
from core.knowledge.parse.chunking import build_chunks, parse_sections
from core.knowledge.parse.extraction import Unreadable, decide_file_kind, extract_text
from tests.support.files import make_docx, make_locked_pdf, make_pdf, make_scanned_pdf

KINDS = {
    "a PDF by its name": ("contract.PDF", "", "pdf"),
    "a Word file by its name": ("procedure.docx", "", "docx"),
    "Markdown": ("notes.md", "", "markdown"),
    "a PDF by its media type only": ("upload", "application/pdf", "pdf"),
    "text with a charset": ("upload", "text/plain; charset=utf-8", "text"),
    "a JPEG image": ("photo.jpg", "", "image"),
    "a PNG by its media type only": ("Screenshot", "image/png", "image"),
    "a GIF is not read": ("cat.gif", "image/gif", None),
    "an old Word file is not read": ("old.doc", "application/msword", None),
}


@pytest.mark.parametrize("name,media_type,kind", KINDS.values(), ids=KINDS)
def test_decide_file_kind(name, media_type, kind):
    assert decide_file_kind(name, media_type) == kind


def test_a_pdf_keeps_its_pages_and_its_table():
    extracted = extract_text(make_pdf(), "pdf", max_pages=10)
    assert extracted.format == "paged" and extracted.pages == 3
    sections = parse_sections(extracted.content, "paged")
    assert [s.heading for s in sections] == ["p. 1", "p. 2", "p. 3"]
    hotels = next(s for s in sections if "140 euros" in s.blocks[0].text)
    assert decide_page(hotels.heading) == 2
    assert "Paris" in sections[2].blocks[-1].text and "60 euros" in sections[2].blocks[-1].text


def test_chunks_of_a_pdf_never_span_two_pages():
    extracted = extract_text(make_pdf(), "pdf", max_pages=10)
    chunks = build_chunks(
        extracted.content,
        "paged",
        budget=200,
        overlap=0,
        count=lambda t: len(t.split()),
        sentences=lambda t: t.split(". "),
    )
    assert [decide_page(c.heading) for c in chunks] == [1, 2, 3]


def test_a_word_document_keeps_its_headings_list_and_table():
    extracted = extract_text(make_docx(), "docx", max_pages=10)
    assert extracted.format == "markdown" and extracted.title == "Onboarding procedure"
    sections = {s.heading: s for s in parse_sections(extracted.content, "markdown")}
    assert "Onboarding procedure > Accounts" in sections
    contacts = sections["Onboarding procedure > Contacts"]
    [table] = contacts.blocks
    assert table.kind == "table" and table.parts[0] == "| Team | Contact |"
    assert "| IT desk | Room 204 |" in table.parts
    [badges] = sections["Onboarding procedure > Accounts"].blocks
    assert badges.kind == "list" and len(badges.parts) == 2


UNREADABLE = {
    "a scan": (make_scanned_pdf, "pdf", "no text layer"),
    "a password": (make_locked_pdf, "pdf", "protected by a password"),
    "a damaged PDF": (lambda: make_pdf()[:400], "pdf", "damaged or not a PDF"),
    "not a Word file": (lambda: b"plain bytes", "docx", "damaged or not a Word document"),
    "too many pages": (make_pdf, "pdf", "it has 3 pages, more than the 2 the bot reads"),
    "not UTF-8": (lambda: b"\xff\xfe\x00bad", "text", "not UTF-8"),
}


@pytest.mark.parametrize("make,kind,reason", UNREADABLE.values(), ids=UNREADABLE)
def test_an_unreadable_file_says_why_in_one_sentence(make, kind, reason):
    with pytest.raises(Unreadable) as caught:
        extract_text(make(), kind, max_pages=2)
    assert reason in str(caught.value) and "\n" not in str(caught.value)


def test_a_word_paragraph_that_looks_like_markdown_stays_text():
    import io

    import docx

    document = docx.Document()
    for text in ("1. not a list", "# not a heading", "- not an item"):
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    extracted = extract_text(out.getvalue(), "docx", max_pages=10)
    [section] = parse_sections(extracted.content, "markdown")
    assert [block.kind for block in section.blocks] == ["text", "text", "text"]
