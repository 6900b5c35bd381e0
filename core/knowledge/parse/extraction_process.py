"""The extraction process: reads a file's bytes on stdin and writes its text as JSON on
stdout (`{"content", "format", "title", "pages", "scanned"}`, or `{"unreadable": reason}`).
Its arguments: the file's kind, its page limit, its text limit (0: none), and how OCR
reads (`OcrOptions.encode`; empty or absent: scans and images are not read).

A process of its own, so that a crafted file that would take minutes or gigabytes is
stopped by its time limit and its memory limit without harming the bot.
"""

from __future__ import annotations

import json
import resource
import sys
from dataclasses import asdict

from core.knowledge.parse.extraction import FileKind, Unreadable, extract_text
from core.knowledge.parse.ocr import OcrOptions

MEMORY_LIMIT_BYTES = 2 * 1024**3


def main(argv: list[str]) -> int:
    kind, max_pages = argv[0], int(argv[1])
    max_text = int(argv[2]) if len(argv) > 2 and int(argv[2]) > 0 else None
    ocr = OcrOptions.decode(argv[3]) if len(argv) > 3 else None
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    data = sys.stdin.buffer.read()
    try:
        read = extract_text(data, _kind(kind), max_pages, max_text, ocr)
        result: dict[str, object] = asdict(read)
    except Unreadable as exc:
        result = {"unreadable": {"reason": exc.reason, "values": exc.values}}
    except MemoryError:
        result = {"unreadable": {"reason": "FILE_TOO_MUCH_MEMORY", "values": {}}}
    sys.stdout.write(json.dumps(result))
    return 0


def _kind(name: str) -> FileKind:
    if name not in ("pdf", "docx", "image", "markdown", "text", "html"):
        raise SystemExit(f"unknown kind {name!r}")
    return name  # type: ignore[return-value]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
