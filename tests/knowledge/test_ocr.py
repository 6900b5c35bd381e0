"""Scanned PDF pages and images read by OCR: real tesseract (Debian's tesseract-ocr, which
the test command installs), real pixels rendered from text the test wrote."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from core.config.files import FileSettings
from core.knowledge.documents import Hit
from core.knowledge.parse.chunking import parse_sections
from core.knowledge.parse.extraction import Unreadable, extract_text
from core.knowledge.parse.extractor import Extractor
from core.knowledge.parse.ocr import OcrOptions, choose_packs
from core.sources import build_source
from tests.support.files import (
    TRAVEL_PAGES,
    make_pdf,
    make_picture,
    make_scanned_text_pdf,
    render_text_image,
)

OCR = OcrOptions(("en",), max_pages=10, max_pixels=40_000_000)
ERROR = "ERROR E4711: quota exceeded for bucket reports-2027"


def mixed_pdf() -> bytes:
    """Two pages with a text layer and, between them, one scanned page."""
    import pypdf

    text, scan = (
        pypdf.PdfReader(io.BytesIO(make_pdf())),
        pypdf.PdfReader(io.BytesIO(make_scanned_text_pdf())),
    )
    writer = pypdf.PdfWriter()
    for page in (text.pages[0], scan.pages[1], text.pages[2]):
        writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_scanned_pdf_is_read_by_ocr_page_by_page_and_marked_so():
    extracted = extract_text(make_scanned_text_pdf(), "pdf", max_pages=10, ocr=OCR)
    assert extracted.pages == 3 and extracted.scanned == 3
    sections = parse_sections(extracted.content, "paged")
    assert [s.heading for s in sections] == ["p. 1 (scan)", "p. 2 (scan)", "p. 3 (scan)"]
    assert "140 euros in Paris" in sections[1].blocks[0].text


def test_only_the_pages_without_a_text_layer_are_read_by_ocr_and_cited_so():
    extracted = extract_text(mixed_pdf(), "pdf", max_pages=10, ocr=OCR)
    assert extracted.scanned == 1
    sections = parse_sections(extracted.content, "paged")
    assert [s.heading for s in sections] == ["p. 1", "p. 2 (scan)", "p. 3"]

    def hit(heading: str) -> Hit:
        return Hit("c1", "c", "policy", "files", "Policy", "", heading, "…", 0, False, 1.0)

    assert build_source(hit("p. 2 (scan)")).title == "Policy, p. 2, read from a scan"
    assert build_source(hit("p. 1"), [hit("p. 2 (scan)"), hit("p. 3")]).title == (
        "Policy, pp. 1–3 (p. 2 read from a scan)"
    )
    assert build_source(hit("p. 1")).title == "Policy, p. 1"


def test_without_ocr_a_scan_is_refused_as_before():
    with pytest.raises(Unreadable, match="no text layer"):
        extract_text(make_scanned_text_pdf(), "pdf", max_pages=10)


def test_a_scan_of_more_pages_than_ocr_reads_is_refused_with_the_reason():
    many = make_scanned_text_pdf(TRAVEL_PAGES[:1], repeat=12)
    with pytest.raises(Unreadable) as caught:
        extract_text(many, "pdf", max_pages=500, ocr=OCR)
    assert str(caught.value) == (
        "it has 12 pages without a text layer (scans), more than the 10 the bot reads by OCR"
    )


def test_a_screenshot_is_read_and_a_picture_without_text_says_so():
    screenshot = render_text_image(ERROR, width_mm=160, height_mm=30)
    read = extract_text(screenshot, "image", max_pages=10, ocr=OCR)
    assert read.format == "text" and ERROR in read.content
    with pytest.raises(Unreadable, match="I found no text in it"):
        extract_text(make_picture(), "image", max_pages=10, ocr=OCR)
    with pytest.raises(Unreadable, match="damaged or not a PNG or JPEG"):
        extract_text(b"GIF89a....", "image", max_pages=10, ocr=OCR)
    jpeg = io.BytesIO()
    Image.open(io.BytesIO(screenshot)).convert("RGB").save(jpeg, "JPEG", quality=90)
    assert ERROR in extract_text(jpeg.getvalue(), "image", max_pages=10, ocr=OCR).content


def test_an_image_of_too_many_pixels_is_refused_before_it_is_decoded():
    huge = io.BytesIO()
    Image.new("L", (5000, 5000), 255).save(huge, "PNG")
    with pytest.raises(Unreadable, match="it has 25,000,000 pixels, more than the 1,000,000"):
        extract_text(huge.getvalue(), "image", max_pages=10, ocr=OcrOptions(max_pixels=1_000_000))


def test_the_languages_follow_the_installed_packs():
    installed = frozenset({"eng", "deu"})
    assert choose_packs(["de", "en"], installed) == "deu+eng"
    assert choose_packs(["ja"], installed) == "eng", "a language without its pack: English"
    assert choose_packs(["de-AT", "de"], installed) == "deu"


async def test_scans_are_read_in_the_reading_process_and_ocr_can_be_turned_off():
    read = await Extractor(lambda: FileSettings()).extract(make_scanned_text_pdf(), "pdf", ("en",))
    assert read.scanned == 3 and "Travelink" in read.content
    off = Extractor(lambda: FileSettings(ocr=False))
    with pytest.raises(Unreadable, match="no text layer"):
        await off.extract(make_scanned_text_pdf(), "pdf")


async def test_ocr_that_takes_too_long_is_stopped_with_its_process():
    extractor = Extractor(lambda: FileSettings(timeout_seconds=1.5))
    many = make_scanned_text_pdf(TRAVEL_PAGES, repeat=8)
    with pytest.raises(Unreadable, match=r"took longer than the 1\.5 s"):
        await extractor.extract(many, "pdf")


def test_knowledge_ingest_reads_scans_and_images_in_the_collections_language(tmp_path):
    from core.knowledge.documents import Document
    from core.knowledge.parse.files import read_documents

    (tmp_path / "scan.pdf").write_bytes(make_scanned_text_pdf())
    (tmp_path / "error.png").write_bytes(render_text_image(ERROR, width_mm=160, height_mm=30))
    (tmp_path / "cat.png").write_bytes(make_picture())
    found = {
        getattr(item, "id", "problem"): item for item in read_documents([tmp_path], "handbook")
    }
    scan, error = found["scan.pdf"], found["error.png"]
    assert isinstance(scan, Document) and "\x1a" in scan.content and "Travelink" in scan.content
    assert isinstance(error, Document) and ERROR in error.content
    assert "cat.png: I found no text in it" in str(found["problem"])
