"""Extraction off the event loop: each PDF or Word file is read in a process of its own
(core/knowledge/parse/extraction_process.py), a few at a time, within a time limit."""

from __future__ import annotations

import asyncio
import json
import logging
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

log = logging.getLogger(__name__)


class Extractor:
    def __init__(self, settings: Callable[[], FileSettings]) -> None:
        self.settings = settings
        self._slots: asyncio.Semaphore | None = None
        self._slots_for = 0

    async def extract(self, data: bytes, kind: FileKind) -> Extracted:
        """The file's text; Unreadable (one sentence for people) says why there is none."""
        settings = self.settings()
        if len(data) > settings.max_bytes:
            raise Unreadable("FILE_TOO_LARGE", size=len(data), limit=settings.max_bytes)
        if kind not in BINARY_KINDS:
            return extract_text(data, kind, settings.max_pages)
        async with self._slots_now(settings.at_once):
            return await self._in_process(data, kind, settings)

    def _slots_now(self, at_once: int) -> asyncio.Semaphore:
        # Made again when the config changes it; files under way keep their old slots.
        if self._slots is None or self._slots_for != at_once:
            self._slots, self._slots_for = asyncio.Semaphore(at_once), at_once
        return self._slots

    async def _in_process(self, data: bytes, kind: FileKind, settings: FileSettings) -> Extracted:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "core.knowledge.parse.extraction_process", kind,
            str(settings.max_pages),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            async with asyncio.timeout(settings.timeout_seconds):
                out, err = await process.communicate(data)
        except (TimeoutError, asyncio.CancelledError) as stopped:
            process.kill()
            await asyncio.shield(process.wait())
            if isinstance(stopped, asyncio.CancelledError):
                raise
            raise Unreadable("FILE_TOO_SLOW", seconds=f"{settings.timeout_seconds:g}") from None
        if process.returncode != 0:
            # A crash of the reader (its memory limit, a bug): logged without the file's text.
            log.warning("reading a %s file failed (exit %s): %s", kind, process.returncode,
                        err.decode(errors="replace")[-300:])  # fmt: skip
            raise Unreadable("FILE_CRASHED")
        result = json.loads(out)
        if "unreadable" in result:
            found = result["unreadable"]
            raise Unreadable(found["reason"], **found["values"])
        return Extracted(**result)
