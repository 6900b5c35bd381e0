"""`[files]`: files shared in rooms, and PDF and Word documents sent to the knowledge."""

from __future__ import annotations

from pydantic import Field

from core.config.strict import Strict


class FileSettings(Strict):
    rooms: bool = True
    """Files shared in rooms (PDF, Word, Markdown, HTML, text) become the room's knowledge."""
    collection: str | None = None
    """The collection they are kept in; none: `[summaries] collection`. Either must be one of
    [collections]; with neither, files in rooms are not kept."""
    max_bytes: int = Field(default=20_000_000, ge=1_000)
    """A file over these limits is not read (and whoever asks about it is told why)."""
    max_pages: int = Field(default=500, ge=1)
    """A file over these limits is not read; whoever asks about it is told why. They apply to PDF
    and Word files sent to the ingestion API and read by knowledge-ingest too."""
    timeout_seconds: float = Field(default=60.0, gt=0, le=3600)
    """PDF and Word files are read in a process of their own (2 GiB of memory at most), stopped
    after this long."""
    at_once: int = Field(default=1, ge=1, le=16)
    """PDF and Word files read at the same time by one process (each in a process of its own)."""
    ocr: bool = True
    """Pages of PDF files that have no text layer (scans), and PNG and JPEG images (sent to the
    bot, asked about, or sent to the ingestion API), are read by OCR (tesseract) in the same
    process and limits; in the languages of the room and the collection, where their tesseract
    language pack is installed (English otherwise). Off: they are refused with the reason."""
    ocr_max_pages: int = Field(default=30, ge=1, le=10_000)
    """A PDF with more pages without a text layer than this is refused (said with the reason):
    OCR reads about a page a second on one core, and `timeout_seconds` bounds the whole file."""
    ocr_max_pixels: int = Field(default=40_000_000, ge=100_000, le=500_000_000)
    """A scanned page is rendered at 300 dpi, smaller when that would be more pixels than this;
    an image with more pixels is refused."""
