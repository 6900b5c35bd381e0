"""Reading documents from files and folders: Markdown, plain text, HTML and JSON lines."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from core.knowledge.documents import (
    FORMATS,
    Document,
    DocumentFormat,
    id_problem,
    load_json,
    parse_document_dates,
)

SUFFIXES: dict[str, DocumentFormat] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
}
JSONL = {".jsonl", ".ndjson"}


class FileProblem(Exception):
    """A file or line that cannot be read as a document; the text names it."""


def _title(path: Path, text: str, fmt: str) -> str:
    if fmt == "markdown":
        heading = re.search(r"^#\s+(.+?)\s*#*\s*$", text, re.MULTILINE)
        if heading:
            return heading.group(1)
    if fmt == "html":
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
        if title and title.group(1).strip():
            return " ".join(title.group(1).split())
    return path.stem.replace("_", " ").replace("-", " ")


def _from_jsonl(path: Path, collection: str) -> Iterator[Document | FileProblem]:
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
                url=str(item.get("url", "")),
                language=str(item.get("language", "")),
                version=str(item.get("version", "")),
                date=str(item.get("date", "")),
                date_end=str(item.get("date_end", "")),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            yield FileProblem(f"{path}:{number}: {type(exc).__name__}: {exc}")


def read_documents(paths: list[Path], collection: str) -> Iterator[Document | FileProblem]:
    """Documents from files and folders (walked recursively, in name order).

    A file's id is its path relative to the folder given (or its name, for a file
    given directly), so that ingesting the same folder again updates the same documents.
    """
    for root in paths:
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for path in files:
            suffix = path.suffix.lower()
            if suffix in JSONL:
                yield from _from_jsonl(path, collection)
                continue
            fmt = SUFFIXES.get(suffix)
            if fmt is None:
                if root.is_file():
                    yield FileProblem(f"{path}: not Markdown, text, HTML or JSON lines")
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                yield FileProblem(f"{path}: cannot be read: {exc}")
                continue
            doc_id = path.relative_to(root).as_posix() if root.is_dir() else path.name
            # A name that is not UTF-8 reads with lone surrogates, which cannot be stored.
            problem = id_problem(doc_id)
            if problem:
                yield FileProblem(f"{path}: {problem}")
                continue
            yield Document(collection, doc_id, _title(path, text, fmt), text, fmt)
