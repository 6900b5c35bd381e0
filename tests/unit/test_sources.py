"""Sources under an answer name the pages of a PDF their cited passages come from."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.knowledge.documents import Hit
from core.sources import build_page_label, build_source

LABELS = {
    "none": ((), ""),
    "one page": ((4,), "p. 4"),
    "two pages": ((4, 2, 4), "pp. 2, 4"),
    "a run of pages": ((3, 2, 4), "pp. 2–4"),
    "two neighbours": ((2, 3), "pp. 2, 3"),
}


@pytest.mark.parametrize("pages,label", LABELS.values(), ids=LABELS)
def test_build_page_label(pages, label):
    assert build_page_label(pages) == label


HIT = Hit(
    "c#0",
    "files",
    "room-file/1",
    "room",
    "contract.pdf",
    "https://matrix.to/#/x",
    "p. 2",
    "text",
    0,
    False,
    0.5,
)


def test_a_pdf_source_names_its_cited_pages_and_other_documents_do_not():
    assert build_source(HIT, [replace(HIT, heading="p. 5")]).title == "contract.pdf, pp. 2, 5"
    assert build_source(replace(HIT, heading="Travel > Trains")).title == "contract.pdf"
