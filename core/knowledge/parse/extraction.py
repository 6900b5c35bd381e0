"""The text of files people share and admins have: PDF (pypdf) and Word (python-docx)
documents, PNG and JPEG images (by OCR), and the text formats the chunkers read.

A PDF becomes `paged` text, its pages separated by form feeds, so that every chunk
keeps its page and a citation can say "p. 4". A page without a text layer (a scan) is
rendered and read by OCR (core/knowledge/parse/ocr.py) and starts with SCANNED_MARK, so
that its citation says "p. 4, read from a scan". A Word document becomes Markdown: its
headings become sections, its lists lists and its tables Markdown tables, kept whole by
the chunker. What cannot be read raises `Unreadable`, whose text is one sentence fit to
tell the person who asks about the file.

Parsing a file from outside is the riskiest work the bot does (a crafted PDF can take
minutes or gigabytes): the bot runs this module in a process of its own, with a time
limit (see core/knowledge/parse/extractor.py).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from babel.numbers import format_decimal

from core import strings
from core.i18n.catalogs import spoken_language
from core.i18n.language import ENGLISH, speaking
from core.knowledge.documents import DocumentFormat
from core.knowledge.parse.blocks import SCANNED_MARK
from core.knowledge.parse.ocr import OcrMissing, OcrOptions

FileKind = Literal["pdf", "docx", "image", "markdown", "text", "html"]
BINARY_KINDS: tuple[FileKind, ...] = ("pdf", "docx", "image")
PAGE_BREAK = "\f"

SUFFIX_KINDS: dict[str, FileKind] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
}
MEDIA_KINDS: dict[str, FileKind] = {
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/plain": "text",
    "text/html": "html",
    "image/png": "image",
    "image/jpeg": "image",
}
TEXT_FORMATS: dict[FileKind, DocumentFormat] = {
    "markdown": "markdown",
    "text": "text",
    "html": "html",
}


class Unreadable(Exception):
    """A file whose text cannot be had. `reason` names the sentence of core/strings.py
    that says why ("FILE_SCANNED": "it has no text layer (a scan, perhaps)…"), `values`
    fill it; str() is the English sentence (for the API and the admin's own tools), and
    `encode()` keeps it to be told later in whatever language asks (`describe_reason`)."""

    def __init__(self, reason: str, **values: int | str) -> None:
        self.reason, self.values = reason, values
        with speaking(ENGLISH):
            super().__init__(_fill(getattr(strings, reason), values))

    def encode(self) -> str:
        return json.dumps({"reason": self.reason, "values": self.values})


def _fill(template: str, values: dict[str, int | str]) -> str:
    """The sentence with its numbers written as the language being spoken writes them."""
    language = spoken_language()
    return template.format(
        **{
            name: format_decimal(value, locale=language) if isinstance(value, int) else value
            for name, value in values.items()
        }
    )


def describe_reason(stored: str) -> str:
    """A reason kept by `Unreadable.encode`, in the language being spoken; numbers written
    as that language writes them. Text kept as it is (a release before this) stays so."""
    try:
        found = json.loads(stored)
        return _fill(getattr(strings, found["reason"]), found.get("values", {}))
    except (ValueError, TypeError, KeyError, AttributeError):
        return stored


@dataclass(frozen=True)
class Extracted:
    content: str
    format: DocumentFormat
    # The title the file gives itself (a PDF's metadata, a Word document's title), if any.
    title: str = ""
    pages: int = 0
    # Pages (of a PDF) or images read by OCR.
    scanned: int = 0


def decide_file_kind(name: str, media_type: str = "") -> FileKind | None:
    """What a file is, by its name's suffix, else by its media type; None: not read."""
    suffix = PurePosixPath(name.lower()).suffix
    if suffix in SUFFIX_KINDS:
        return SUFFIX_KINDS[suffix]
    return MEDIA_KINDS.get(media_type.split(";")[0].strip().lower())


# A Word file's XML is at most this many times its text (measured: 3-8 times; styles,
# revisions and tables add more): a larger one is refused before it is parsed, so that a
# small zip of a huge XML never reaches the parser's memory.
XML_PER_TEXT = 25
# What the rest of a Word file may unpack to: python-docx parses every part it has.
OTHER_PARTS_BYTES = 64_000_000


class TextBudget:
    """The text read so far against `max_text_bytes` (None: no limit); over it, the
    reading stops with FILE_TEXT_TOO_LARGE instead of holding the rest."""

    def __init__(self, max_text_bytes: int | None) -> None:
        self.left = max_text_bytes
        self.limit = max_text_bytes

    def spend(self, text: str) -> str:
        if self.left is not None:
            self.left -= len(text.encode())
            if self.left < 0:
                raise Unreadable("FILE_TEXT_TOO_LARGE", limit=self.limit or 0)
        return text


def extract_text(
    data: bytes,
    kind: FileKind,
    max_pages: int,
    max_text_bytes: int | None = None,
    ocr: OcrOptions | None = None,
) -> Extracted:
    """The file's text in a format the chunkers read; Unreadable says why not (among
    others: more than `max_text_bytes` of text, found while reading, not after). Scanned
    pages and images are read by OCR with `ocr`; None: they are not read."""
    budget = TextBudget(max_text_bytes)
    if kind == "pdf":
        return _pdf(data, max_pages, budget, ocr)
    if kind == "image":
        return _image(data, budget, ocr)
    if kind == "docx":
        return _docx(data, budget)
    try:
        text = budget.spend(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise Unreadable("FILE_NOT_UTF8") from None
    if not text.strip():
        raise Unreadable("FILE_EMPTY")
    return Extracted(text, TEXT_FORMATS[kind])


def _pdf(data: bytes, max_pages: int, budget: TextBudget, ocr: OcrOptions | None) -> Extracted:
    import pypdf  # only the extraction process loads the PDF library

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("FILE_PASSWORD")
        count = len(reader.pages)
        if count > max_pages:
            raise Unreadable("FILE_TOO_MANY_PAGES", count=count, max_pages=max_pages)
        pages = [budget.spend(_page_text(page)) for page in reader.pages]
        metadata = reader.metadata
        title = str((metadata.get("/Title") if metadata else "") or "").strip()
    except Unreadable:
        raise
    except Exception as exc:  # pypdf raises many kinds for a damaged file
        raise Unreadable("FILE_NOT_A_PDF") from exc
    blank = [number for number, text in enumerate(pages) if not text]
    scanned = 0
    if blank and ocr is not None:
        if len(blank) > ocr.max_pages:
            # Refused before any is read: the time limit would stop it halfway anyway.
            raise Unreadable("FILE_TOO_MANY_SCANS", count=len(blank), max_pages=ocr.max_pages)
        for number, text in _ocr_pages(data, blank, ocr):
            if text:
                pages[number] = SCANNED_MARK + budget.spend(text)
                scanned += 1
        if not any(pages):
            raise Unreadable("FILE_SCAN_NO_TEXT")
    if not any(pages):
        raise Unreadable("FILE_SCANNED")
    return Extracted(PAGE_BREAK.join(pages), "paged", _one_line(title), count, scanned)


def _ocr_pages(data: bytes, numbers: list[int], ocr: OcrOptions) -> Iterator[tuple[int, str]]:
    """The text OCR reads on these pages (counted from 0), page by page."""
    import pypdfium2  # only the extraction process loads pdfium

    from core.knowledge.parse.ocr import choose_packs, installed_packs, read_pixels, render_page

    try:
        packs = choose_packs(ocr.languages, installed_packs())
    except OcrMissing:
        raise Unreadable("FILE_NO_OCR") from None
    try:
        document = pypdfium2.PdfDocument(data)
    except Exception as exc:  # pdfium cannot open what pypdf could
        raise Unreadable("FILE_NOT_A_PDF") from exc
    try:
        for number in numbers:
            page = document[number]
            image = render_page(page, ocr.max_pixels)
            page.close()
            text = read_pixels(image, packs).replace(PAGE_BREAK, "\n").replace(SCANNED_MARK, "")
            yield number, text.strip()
    finally:
        document.close()


def _image(data: bytes, budget: TextBudget, ocr: OcrOptions | None) -> Extracted:
    """A PNG or JPEG image's text, read by OCR."""
    if ocr is None:
        raise Unreadable("FILE_KIND_UNREAD")
    from PIL import Image, UnidentifiedImageError

    from core.knowledge.parse.ocr import choose_packs, installed_packs, read_pixels

    try:
        packs = choose_packs(ocr.languages, installed_packs())
    except OcrMissing:
        raise Unreadable("FILE_NO_OCR") from None
    try:
        image = Image.open(io.BytesIO(data), formats=("PNG", "JPEG"))
        width, height = image.size  # from its header, before its pixels are decoded
        if width * height > ocr.max_pixels:
            raise Unreadable("IMAGE_TOO_MANY_PIXELS", pixels=width * height, limit=ocr.max_pixels)
        image.load()
    except Unreadable:
        raise
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise Unreadable("IMAGE_DAMAGED") from exc
    text = read_pixels(image, packs).strip()
    if not text:
        raise Unreadable("IMAGE_NO_TEXT")
    return Extracted(budget.spend(text) + "\n", "text", pages=1, scanned=1)


def _page_text(page: object) -> str:
    text = page.extract_text() or ""  # type: ignore[attr-defined]
    # A form feed inside a page would read as a page break, the mark as a scanned page.
    return text.replace(PAGE_BREAK, "\n").replace(SCANNED_MARK, "").strip()


def _docx(data: bytes, budget: TextBudget) -> Extracted:
    try:
        _check_docx_size(data, budget)
        return _docx_markdown(data, budget)
    except Unreadable:
        raise
    except Exception as exc:  # python-docx raises many kinds for a damaged file
        raise Unreadable("FILE_NOT_A_DOCX") from exc


def _check_docx_size(data: bytes, budget: TextBudget) -> None:
    """Refuse, from the zip's directory alone, a document whose body's XML could only hold
    more text than the budget (XML_PER_TEXT), or whose other parts (styles, themes: 800 kB
    in Word's own template) unpack to more than OTHER_PARTS_BYTES."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        sizes = {item.filename: item.file_size for item in archive.infolist()}
    body = sizes.pop("word/document.xml", 0)
    if budget.limit is not None and body > budget.limit * XML_PER_TEXT:
        raise Unreadable("FILE_TEXT_TOO_LARGE", limit=budget.limit)
    if sum(sizes.values()) > OTHER_PARTS_BYTES:
        raise Unreadable("FILE_TOO_MUCH_MEMORY")


def _docx_markdown(data: bytes, budget: TextBudget) -> Extracted:
    import docx  # python-docx, loaded by the extraction process only
    from docx.table import Table

    document = docx.Document(io.BytesIO(data))
    lines: list[str] = []
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            rows = [[budget.spend(cell.text) for cell in row.cells] for row in item.rows]
            lines += ["", *_markdown_table(rows), ""]
            continue
        text = " ".join(budget.spend(item.text).split())
        if not text:
            continue
        style = (item.style.name if item.style is not None else "") or ""
        level = _heading_level(style)
        if level:
            lines += ["", "#" * level + " " + text, ""]
        elif style.startswith("List"):
            lines.append(("1. " if "Number" in style else "- ") + _escaped(text))
        else:
            lines += ["", _escaped(text), ""]
    content = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    if not content:
        raise Unreadable("FILE_NO_TEXT")
    title = _one_line(document.core_properties.title or "")
    return Extracted(content + "\n", "markdown", title)


def _heading_level(style: str) -> int:
    if style == "Title":
        return 1
    match = re.fullmatch(r"Heading (\d)", style)
    return min(int(match.group(1)), 6) if match else 0


# A paragraph that starts like Markdown syntax would be read as a heading, list or quote.
BLOCK_MARKER = re.compile(r"^(#|>|[-+*] |\d+[.)] |\||```|~~~|=+$|-+$)")


def _escaped(text: str) -> str:
    if not BLOCK_MARKER.match(text):
        return text
    # "1." is escaped after its number ("1\."); the other markers before themselves.
    numbered = re.match(r"^(\d+)([.)])", text)
    return f"{numbered[1]}\\{text[len(numbered[1]) :]}" if numbered else "\\" + text


def _markdown_table(rows: list[list[str]]) -> list[str]:
    if not rows:
        return []

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(" ".join(c.split()).replace("|", "\\|") for c in cells) + " |"

    width = max(len(row) for row in rows)
    padded = [row + [""] * (width - len(row)) for row in rows]
    return [line(padded[0]), "|" + " --- |" * width, *(line(row) for row in padded[1:])]


def _one_line(text: str) -> str:
    return " ".join(text.split())[:1000]
