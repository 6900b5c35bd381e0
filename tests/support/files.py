"""Real PDF and Word files, made by the tests: fpdf2 writes PDFs with a text layer (or
only a drawing, as a scan has no text), pypdf locks one with a password, python-docx
writes Word documents."""

from __future__ import annotations

import hashlib
import io

import docx
import pypdf
from fpdf import FPDF

TRAVEL_PAGES = (
    "Travel policy. Trains are booked through Travelink, in second class.",
    "Hotels. A night costs at most 140 euros in Paris and 110 euros elsewhere.",
    "Expenses. Receipts are filed within thirty days in the expenses tool.",
)


def make_pdf(pages: tuple[str, ...] = TRAVEL_PAGES, *, table: bool = True) -> bytes:
    """A PDF with one paragraph a page, and a table of allowances on the last page."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for number, text in enumerate(pages, start=1):
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
        if table and number == len(pages):
            with pdf.table() as grid:
                for row in (
                    ("City", "Daily allowance"),
                    ("Paris", "60 euros"),
                    ("Lyon", "45 euros"),
                ):
                    cells = grid.row()
                    for cell in row:
                        cells.cell(cell)
    return bytes(pdf.output())


def make_scanned_pdf() -> bytes:
    """A PDF with pages but no text layer, as a scan without OCR."""
    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 100, 60, style="F")
    return bytes(pdf.output())


def make_locked_pdf(password: str = "s3cret") -> bytes:
    reader = pypdf.PdfReader(io.BytesIO(make_pdf()))
    writer = pypdf.PdfWriter()
    for page in reader.pages:
        writer.add_page(page)
    writer.encrypt(password)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(*, filler_paragraphs: int = 0) -> bytes:
    """A procedure with headings, a list and a table; `filler_paragraphs` make it large."""
    document = docx.Document()
    document.core_properties.title = "Onboarding procedure"
    document.add_heading("Onboarding procedure", level=1)
    document.add_paragraph("New colleagues get their laptop on the first day from the IT desk.")
    document.add_heading("Accounts", level=2)
    document.add_paragraph("The badge is collected at reception.", style="List Bullet")
    document.add_paragraph("The mail account is opened by the IT desk.", style="List Bullet")
    document.add_heading("Contacts", level=2)
    table = document.add_table(rows=3, cols=2)
    for row, cells in zip(
        table.rows,
        (("Team", "Contact"), ("IT desk", "Room 204"), ("Reception", "Ground floor")),
        strict=True,
    ):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    for n in range(filler_paragraphs):
        # Words that do not repeat, so that the file grows (a DOCX is compressed).
        words = (hashlib.sha256(f"{n}-{i}".encode()).hexdigest()[:8] for i in range(60))
        document.add_paragraph(f"Filler paragraph {n}: " + " ".join(words))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_wav(seconds: float = 1.0, pitch: int = 440) -> bytes:
    """A real WAV recording (a tone), as a voice message's audio; `pitch` makes another."""
    import math
    import struct
    import wave

    rate = 16_000
    out = io.BytesIO()
    with wave.open(out, "wb") as recording:
        recording.setnchannels(1)
        recording.setsampwidth(2)
        recording.setframerate(rate)
        frames = (
            int(8000 * math.sin(2 * math.pi * pitch * n / rate)) for n in range(int(seconds * rate))
        )
        recording.writeframes(b"".join(struct.pack("<h", frame) for frame in frames))
    return out.getvalue()


def render_text_image(
    text: str, *, width_mm: float = 210, height_mm: float = 297, dpi: int = 200
) -> bytes:
    """A PNG of `text` typeset on a page (or a screenshot-sized box): real pixels, no text
    layer, as a scanner or a screenshot makes them. fpdf2 typesets, pdfium renders."""
    import pypdfium2

    pdf = FPDF(unit="mm", format=(width_mm, height_mm))
    pdf.set_auto_page_break(False)
    pdf.set_margins(10, 10, 10)
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 7, text)
    page = pypdfium2.PdfDocument(bytes(pdf.output()))[0]
    out = io.BytesIO()
    page.render(scale=dpi / 72, grayscale=True).to_pil().save(out, "PNG")
    return out.getvalue()


def make_scanned_text_pdf(pages: tuple[str, ...] = TRAVEL_PAGES, *, repeat: int = 1) -> bytes:
    """An image-only PDF of these pages (`repeat` times over), as a scanner without OCR
    makes it: each page one picture of its text."""
    pdf = FPDF()
    for _ in range(repeat):
        for text in pages:
            pdf.add_page()
            # fpdf2 stores an image used again once: a 300-page scan stays small.
            pdf.image(io.BytesIO(_scan_of(text)), x=0, y=0, w=210, h=297)
    return bytes(pdf.output())


_SCANS: dict[str, bytes] = {}


def _scan_of(text: str) -> bytes:
    if text not in _SCANS:
        _SCANS[text] = render_text_image(text)
    return _SCANS[text]


def make_picture() -> bytes:
    """A PNG drawing of a cat's face: shapes and colours, no text."""
    from PIL import Image, ImageDraw

    picture = Image.new("RGB", (800, 600), (200, 180, 150))
    draw = ImageDraw.Draw(picture)
    fur = (120, 90, 60)
    draw.ellipse((200, 150, 600, 500), fill=fur)
    draw.polygon([(250, 200), (300, 60), (350, 180)], fill=fur)
    draw.polygon([(450, 180), (500, 60), (550, 200)], fill=fur)
    for left in (300, 460):
        draw.ellipse((left, 250, left + 40, 290), fill=(20, 160, 40))
    for n in range(12):
        draw.line((400, 350, 250 + n * 25, 330 + (n % 3) * 20), fill=(240, 240, 240), width=2)
    out = io.BytesIO()
    picture.save(out, "PNG")
    return out.getvalue()
