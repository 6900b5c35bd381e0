"""Extraction off the event loop: each PDF or Word file, and each image, is read in a
process of its own (core/knowledge/parse/extraction_process.py), a few at a time, within a
time limit; OCR (tesseract, a child of that process) is stopped with it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from collections.abc import Callable

from core.config.files import FileSettings
from core.knowledge.parse.extraction import (
    BINARY_KINDS,
    Extracted,
    FileKind,
    Unreadable,
    extract_text,
)
from core.knowledge.parse.ocr import OcrOptions

log = logging.getLogger(__name__)


# What the reading process may write beyond its text's bytes: JSON escapes each
# non-ASCII character as up to 12 bytes (a surrogate pair), plus the fields around it.
JSON_PER_TEXT_BYTE = 6
JSON_OVERHEAD = 64_000


class Extractor:
    def __init__(
        self,
        settings: Callable[[], FileSettings],
        max_text_bytes: Callable[[], int | None] = lambda: None,
    ) -> None:
        self.settings = settings
        # knowledge.max_document_bytes: the reading stops there, in the reading process.
        self.max_text_bytes = max_text_bytes
        self._slots: asyncio.Semaphore | None = None
        self._slots_for = 0

    async def extract(
        self, data: bytes, kind: FileKind, languages: tuple[str, ...] = ()
    ) -> Extracted:
        """The file's text; Unreadable (one sentence for people) says why there is none.
        Scans and images are read by OCR in `languages` (ISO 639-1; none: English)."""
        settings = self.settings()
        if len(data) > settings.max_bytes:
            raise Unreadable("FILE_TOO_LARGE", size=len(data), limit=settings.max_bytes)
        most = self.max_text_bytes()
        if kind not in BINARY_KINDS:
            return extract_text(data, kind, settings.max_pages, most)
        async with self._slots_now(settings.at_once):
            return await self._in_process(data, kind, settings, most, languages)

    def _slots_now(self, at_once: int) -> asyncio.Semaphore:
        # Made again when the config changes it; files under way keep their old slots.
        if self._slots is None or self._slots_for != at_once:
            self._slots, self._slots_for = asyncio.Semaphore(at_once), at_once
        return self._slots

    async def _in_process(
        self,
        data: bytes,
        kind: FileKind,
        settings: FileSettings,
        most: int | None,
        languages: tuple[str, ...],
    ) -> Extracted:
        ocr = (
            OcrOptions(languages or ("en",), settings.ocr_max_pages, settings.ocr_max_pixels)
            if settings.ocr
            else None
        )
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "core.knowledge.parse.extraction_process",
            kind,
            str(settings.max_pages),
            str(most or 0),
            ocr.encode() if ocr else "",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            # A group of its own: stopped, its OCR (a child) stops with it.
            start_new_session=True,
        )
        bound = None if most is None else most * JSON_PER_TEXT_BYTE + JSON_OVERHEAD
        try:
            async with asyncio.timeout(settings.timeout_seconds):
                out, err = await _talk(process, data, bound)
        except (TimeoutError, asyncio.CancelledError) as stopped:
            _kill(process)
            await asyncio.shield(process.wait())
            if isinstance(stopped, asyncio.CancelledError):
                raise
            raise Unreadable("FILE_TOO_SLOW", seconds=f"{settings.timeout_seconds:g}") from None
        if out is None:  # more than its text could be: never read whole
            raise Unreadable("FILE_TEXT_TOO_LARGE", limit=most or 0)
        if process.returncode != 0:
            # A crash of the reader (its memory limit, a bug): logged without the file's text.
            log.warning(
                "reading a %s file failed (exit %s): %s",
                kind,
                process.returncode,
                err.decode(errors="replace")[-300:],
            )
            raise Unreadable("FILE_CRASHED")
        result = json.loads(out)
        if "unreadable" in result:
            found = result["unreadable"]
            raise Unreadable(found["reason"], **found["values"])
        return Extracted(**result)


async def _talk(
    process: asyncio.subprocess.Process, data: bytes, bound: int | None
) -> tuple[bytes | None, bytes]:
    """Give the process `data`, read its answer, and wait for it to end. An answer longer
    than `bound` bytes is not read on: the process is stopped and the answer is None."""
    assert process.stdin and process.stdout and process.stderr

    async def feed() -> None:
        assert process.stdin
        try:
            process.stdin.write(data)
            await process.stdin.drain()
            process.stdin.close()
        except (BrokenPipeError, ConnectionResetError):
            pass  # it stopped reading: what it says tells why

    async def read_all(stream: asyncio.StreamReader, most: int | None) -> bytes | None:
        parts, size = [], 0
        while chunk := await stream.read(1 << 16):
            size += len(chunk)
            if most is not None and size > most:
                return None
            parts.append(chunk)
        return b"".join(parts)

    async def tail(stream: asyncio.StreamReader) -> bytes:
        kept = b""
        while chunk := await stream.read(1 << 16):
            kept = (kept + chunk)[-4096:]  # read to the end, so that it never blocks
        return kept

    async with asyncio.TaskGroup() as group:
        group.create_task(feed())
        errors = group.create_task(tail(process.stderr))
        out = await read_all(process.stdout, bound)
        if out is None:
            _kill(process)
    await process.wait()
    return out, errors.result()


def _kill(process: asyncio.subprocess.Process) -> None:
    """Stop the reading process and whatever it started (tesseract)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # it may have ended
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
