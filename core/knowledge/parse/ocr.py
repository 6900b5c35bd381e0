"""Text read from images by OCR: the pages of a PDF that have no text layer (a scan) and
PNG or JPEG images (a screenshot of an error, a photo of a whiteboard).

Tesseract (Debian's `tesseract-ocr`, one package per language: `tesseract-ocr-deu`…) is
run as a command, with the image on its stdin and its words on stdout: no temporary
file, no Python wrapper (pytesseract runs the same command through temporary files),
and, as a child of the reading process, it is bound by that process's memory limit and
stopped with it (core/knowledge/parse/extractor.py). PDF pages are rendered by pdfium
(pypdfium2). Only this module's callers in the reading process load either.

Words tesseract is unsure of (confidence under MIN_CONFIDENCE) are left out: a photo
without text reads as a few stray letters otherwise, and "no text" is the honest answer.
"""

from __future__ import annotations

import functools
import io
import math
import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# ISO 639-1 (the config's languages) to tesseract's language packs (ISO 639-2/T).
PACKS = {
    "en": "eng",
    "de": "deu",
    "fr": "fra",
    "es": "spa",
    "it": "ita",
    "nl": "nld",
    "pt": "por",
    "pl": "pol",
    "sv": "swe",
    "da": "dan",
    "fi": "fin",
    "no": "nor",
    "nb": "nor",
    "cs": "ces",
    "sk": "slk",
    "sl": "slv",
    "hr": "hrv",
    "hu": "hun",
    "ro": "ron",
    "bg": "bul",
    "el": "ell",
    "ru": "rus",
    "uk": "ukr",
    "tr": "tur",
    "ar": "ara",
    "he": "heb",
    "ja": "jpn",
    "ko": "kor",
    "zh": "chi_sim",
    "ca": "cat",
    "et": "est",
    "lv": "lav",
    "lt": "lit",
    "ga": "gle",
    "eu": "eus",
    "gl": "glg",
}
# The resolution pages are rendered at: tesseract reads 300 dpi best.
DPI = 300
MIN_CONFIDENCE = 50
# Fewer letters or digits than this in all of an image: it has no text to speak of.
MIN_CHARACTERS = 3


class OcrMissing(Exception):
    """Tesseract is not installed (or has no language pack)."""


@dataclass(frozen=True)
class OcrOptions:
    """How the reading process reads images: in which languages (ISO 639-1; those
    without an installed pack are left out, English when none is left), how many scanned
    pages of a PDF at most, and how many pixels a page or an image may have."""

    languages: tuple[str, ...] = ("en",)
    max_pages: int = 30
    max_pixels: int = 40_000_000

    def encode(self) -> str:
        return f"{','.join(self.languages)};{self.max_pages};{self.max_pixels}"

    @classmethod
    def decode(cls, text: str) -> OcrOptions | None:
        if not text:
            return None
        languages, pages, pixels = text.split(";")
        return cls(tuple(filter(None, languages.split(","))), int(pages), int(pixels))


def tesseract() -> str:
    found = shutil.which("tesseract")
    if found is None:
        raise OcrMissing("tesseract is not installed (Debian: apt-get install tesseract-ocr)")
    return found


@functools.cache
def installed_packs() -> frozenset[str]:
    """The language packs tesseract has (`tesseract --list-langs`)."""
    listed = subprocess.run(
        [tesseract(), "--list-langs"], capture_output=True, text=True, check=False, env=_env()
    )
    lines = listed.stdout.splitlines()[1:]  # after "List of available languages…"
    return frozenset(line.strip() for line in lines if line.strip() and line.strip() != "osd")


def choose_packs(languages: Iterable[str], installed: frozenset[str]) -> str:
    """Tesseract's `-l` for these languages: the installed packs among theirs, in their
    order, English when none is installed (or the first pack there is)."""
    chosen: list[str] = []
    for language in languages:
        pack = PACKS.get(language.lower().split("-")[0])
        if pack and pack in installed and pack not in chosen:
            chosen.append(pack)
    if not chosen:
        fallback = "eng" if "eng" in installed else min(installed, default="")
        if not fallback:
            raise OcrMissing("tesseract has no language pack (apt-get install tesseract-ocr-eng)")
        chosen.append(fallback)
    return "+".join(chosen)


def _env() -> dict[str, str]:
    # One thread: pages are read one after another, and a file at a time per slot.
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OMP_THREAD_LIMIT": "1"}


def read_pixels(image: Any, packs: str) -> str:
    """The text tesseract reads in a PIL image, in paragraphs; "" when it reads none."""
    gray = image.convert("L")
    raw = io.BytesIO()
    gray.save(raw, "PPM")  # PGM: no compression to spend time on, read by leptonica
    done = subprocess.run(
        [tesseract(), "stdin", "stdout", "-l", packs, "--dpi", str(DPI), "tsv"],
        input=raw.getvalue(),
        capture_output=True,
        check=False,
        env=_env(),
    )
    if done.returncode != 0:
        raise RuntimeError(f"tesseract failed (exit {done.returncode})")
    return words_to_text(done.stdout.decode("utf-8", errors="replace"))


def words_to_text(tsv: str) -> str:
    """Tesseract's TSV as text: its sure words, a line per line, paragraphs apart."""
    paragraphs: dict[tuple[str, str, str], dict[str, list[str]]] = {}
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) < 12 or cells[0] != "5" or not cells[11].strip():
            continue
        try:
            confidence = float(cells[10])
        except ValueError:
            continue
        if confidence < MIN_CONFIDENCE:
            continue
        lines = paragraphs.setdefault((cells[1], cells[2], cells[3]), {})
        lines.setdefault(cells[4], []).append(cells[11].strip())
    text = "\n\n".join(
        "\n".join(" ".join(words) for words in lines.values()) for lines in paragraphs.values()
    )
    return text if sum(c.isalnum() for c in text) >= MIN_CHARACTERS else ""


def render_page(page: Any, max_pixels: int) -> Any:
    """A pdfium page as a grayscale PIL image at DPI, smaller when that would be more
    than `max_pixels` (a page may say it is metres wide)."""
    width, height = page.get_size()  # in points, 72 a inch
    scale = DPI / 72
    if width * height * scale * scale > max_pixels:
        scale = math.sqrt(max_pixels / max(width * height, 1.0))
    return page.render(scale=scale, grayscale=True).to_pil()
