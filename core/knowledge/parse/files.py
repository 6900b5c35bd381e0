"""Reading documents from files and folders: Markdown, plain text, HTML, JSON lines, and
PDF and Word files and PNG and JPEG images (their text, scans and images read by OCR, see
core/knowledge/parse/extraction.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import yaml

from core.config.files import FileSettings
from core.knowledge.documents import (
    FORMATS,
    Document,
    DocumentFormat,
    id_problem,
    load_json,
    parse_document_dates,
)
from core.knowledge.parse.extraction import SUFFIX_KINDS, Unreadable, extract_text
from core.knowledge.parse.markdown_text import markdown_to_blocks
from core.knowledge.parse.ocr import OcrOptions

SUFFIXES: dict[str, DocumentFormat] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
}
JSONL = {".jsonl", ".ndjson"}
BINARY_SUFFIXES = {".pdf", ".docx", ".png", ".jpg", ".jpeg"}


class FileProblem(Exception):
    """A file or line that cannot be read as a document; the text names it."""


# A Markdown file's front matter: YAML between two `---` lines at the very start.
FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
FRONT_MATTER_KEYS = ("title", "url", "date", "date_end")


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """The front matter's `title`, `url`, `date` and `date_end` (others are ignored), and
    the text after it. Raises ValueError when the block is not a YAML mapping."""
    match = FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise ValueError(f"the front matter is not valid YAML ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise ValueError("the front matter is not a set of `key: value` lines")
    found = {key: str(data[key]).strip() for key in FRONT_MATTER_KEYS if data.get(key)}
    return found, text[match.end() :]


def _title(path: Path, text: str, fmt: str) -> str:
    """The first heading (Markdown), the <title> (HTML), else the file's name in words."""
    if fmt == "markdown":
        heading = next((b.text for b in markdown_to_blocks(text) if b.kind == "heading"), "")
        if heading:
            return heading
    if fmt == "html":
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
        if title and title.group(1).strip():
            return " ".join(title.group(1).split())
    words = path.stem.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:]


def _from_jsonl(
    path: Path, collection: str, file_url: str = ""
) -> Iterator[Document | FileProblem]:
    """A document per line; one without a `url` of its own links to the file itself
    (`file_url`, where it is served), so that its citation can still be opened."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            # The same reading as the ingestion API's: deep nesting, long numbers and lone
            # surrogates are refused here rather than crashing the run later.
            item = load_json(line)
            fmt = item.get("format", "markdown")
            if fmt not in FORMATS:
                raise ValueError(f"format must be one of {', '.join(FORMATS)}")
            parse_document_dates(str(item.get("date", "")), str(item.get("date_end", "")))
            problem = id_problem(str(item["id"]))
            if problem:
                raise ValueError(problem)
            yield Document(
                collection=collection,
                id=str(item["id"]),
                title=str(item.get("title") or item["id"]),
                content=str(item["content"]),
                format=fmt,
                url=str(item.get("url") or file_url),
                language=str(item.get("language", "")),
                version=str(item.get("version", "")),
                date=str(item.get("date", "")),
                date_end=str(item.get("date_end", "")),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            yield FileProblem(f"{path}:{number}: {type(exc).__name__}: {exc}")


def read_documents(
    paths: list[Path],
    collection: str,
    *,
    root: Path | None = None,
    base_url: str = "",
    limits: FileSettings | None = None,
    languages: tuple[str, ...] = ("en",),
) -> Iterator[Document | FileProblem]:
    """Documents from files and folders (walked recursively, in name order).

    A file's id is its path relative to `root` when given (the same whichever of its
    folders is named), else relative to the folder given (or its name, for a file given
    directly), so that ingesting again updates the same documents. Its link is the
    front matter's `url`, else `base_url` followed by its id. PDF and Word files and
    images within `limits` (size and pages) are read for their text, scans and images by
    OCR in `languages` (the collection's).
    """
    limits = limits or FileSettings()
    ocr = OcrOptions(languages, limits.ocr_max_pages, limits.ocr_max_pixels) if limits.ocr else None
    for given in paths:
        yield from _read_path(given, collection, root, base_url, limits, ocr)


def _read_path(
    given: Path,
    collection: str,
    root: Path | None,
    base_url: str,
    limits: FileSettings,
    ocr: OcrOptions | None,
) -> Iterator[Document | FileProblem]:
    for path in sorted(p for p in given.rglob("*") if p.is_file()) if given.is_dir() else [given]:
        suffix = path.suffix.lower()
        fmt = SUFFIXES.get(suffix)
        if suffix in JSONL:
            try:
                served = _document_id(path, given, root) if base_url else ""
            except FileProblem:
                served = ""  # outside --root: its records keep the urls they have
            file_url = base_url.rstrip("/") + "/" + quote(served) if served else ""
            yield from _from_jsonl(path, collection, file_url)
        elif fmt is not None or suffix in BINARY_SUFFIXES:
            yield _read_file(path, given, collection, root, base_url, limits, ocr)
        elif given.is_file():  # a file named on purpose, not one met in a folder
            yield FileProblem(
                f"{path}: not Markdown, text, HTML, JSON lines, PDF, Word, PNG or JPEG"
            )


def _document_id(path: Path, given: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            raise FileProblem(f"{path}: not inside --root {root}") from None
    return path.relative_to(given).as_posix() if given.is_dir() else path.name


def _read_file(
    path: Path,
    given: Path,
    collection: str,
    root: Path | None,
    base_url: str,
    limits: FileSettings,
    ocr: OcrOptions | None,
) -> Document | FileProblem:
    try:
        doc_id = _document_id(path, given, root)
        body, fmt, meta = _contents(path, limits, ocr)
        parse_document_dates(meta.get("date", ""), meta.get("date_end", ""))
    except (OSError, UnicodeDecodeError) as exc:
        return FileProblem(f"{path}: cannot be read: {exc}")
    except FileProblem as outside:
        return outside
    except (ValueError, Unreadable) as exc:
        return FileProblem(f"{path}: {exc}")
    # A name that is not UTF-8 reads with lone surrogates, which cannot be stored.
    unfit = id_problem(doc_id)
    if unfit:
        return FileProblem(f"{path}: {unfit}")
    url = meta.get("url") or (base_url.rstrip("/") + "/" + quote(doc_id) if base_url else "")
    return Document(
        collection,
        doc_id,
        meta.get("title") or _title(path, body, fmt),
        body,
        fmt,
        url=url,
        date=meta.get("date", ""),
        date_end=meta.get("date_end", ""),
    )


def _contents(
    path: Path, limits: FileSettings, ocr: OcrOptions | None = None
) -> tuple[str, DocumentFormat, dict[str, str]]:
    """The file's text, its format, and what its front matter says (of a PDF or Word
    file: its own title). PDF and Word files are read here, within `limits`: the admin's
    own files, in a run of its own (the bot reads the files people share in a process
    of its own, see extractor.py)."""
    suffix = path.suffix.lower()
    if suffix in BINARY_SUFFIXES:
        size = path.stat().st_size
        if size > limits.max_bytes:
            raise Unreadable("FILE_TOO_LARGE", size=size, limit=limits.max_bytes)
        read = extract_text(path.read_bytes(), SUFFIX_KINDS[suffix], limits.max_pages, None, ocr)
        return read.content, read.format, {"title": read.title} if read.title else {}
    fmt = SUFFIXES[suffix]
    text = path.read_text(encoding="utf-8")
    if fmt == "markdown":
        meta, body = parse_front_matter(text)
        return body, fmt, meta
    return text, fmt, {}
