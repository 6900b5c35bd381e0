"""PDF and Word files are read in a process of their own, within limits."""

from __future__ import annotations

import asyncio

import pytest

from core.config.files import FileSettings
from core.knowledge.parse.extraction import Unreadable
from core.knowledge.parse.extractor import Extractor
from tests.support.files import make_docx, make_pdf


async def test_a_pdf_and_a_word_file_are_read_in_their_own_process():
    extractor = Extractor(lambda: FileSettings())
    pdf, word = await asyncio.gather(
        extractor.extract(make_pdf(), "pdf"), extractor.extract(make_docx(), "docx")
    )
    assert pdf.pages == 3 and "140 euros" in pdf.content
    assert "Room 204" in word.content


async def test_a_file_that_takes_too_long_is_stopped_and_said_so():
    extractor = Extractor(lambda: FileSettings(timeout_seconds=0.001))
    with pytest.raises(Unreadable, match=r"took longer than the 0\.001 s"):
        await extractor.extract(make_pdf(), "pdf")


async def test_a_file_over_the_size_limit_is_not_read():
    extractor = Extractor(lambda: FileSettings(max_bytes=1_000))
    with pytest.raises(Unreadable, match=r"over the limit of 1,000 bytes"):
        await extractor.extract(make_docx(), "docx")
