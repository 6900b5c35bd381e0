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


def docx_of_text(
    path, megabytes: int, paragraph: str = "Lorem ipsum dolor sit amet. " * 40
) -> None:
    """A Word file whose text is `megabytes` MB: small as a zip, huge once unpacked (written
    as a stream, never held whole)."""
    import io
    import zipfile

    base = zipfile.ZipFile(io.BytesIO(make_docx()))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        for item in base.infolist():
            if item.filename != "word/document.xml":
                out.writestr(item, base.read(item))
        with out.open("word/document.xml", "w", force_zip64=True) as xml:
            xml.write(
                b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
            )
            run = f"<w:p><w:r><w:t>{paragraph}</w:t></w:r></w:p>".encode()
            for _ in range(megabytes * 1_000_000 // len(paragraph)):
                xml.write(run)
            xml.write(b"</w:body></w:document>")


PEAK = """
import asyncio, resource, sys
from core.config.files import FileSettings
from core.knowledge.parse.extraction import Unreadable
from core.knowledge.parse.extractor import Extractor

def peak_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

data = open(sys.argv[1], "rb").read()
before = peak_kib()
try:
    asyncio.run(Extractor(FileSettings, lambda: int(sys.argv[2])).extract(data, "docx"))
    print("read")
except Unreadable as exc:
    print(exc.reason)
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(peak_kib() - before, children)
"""


@pytest.mark.parametrize("megabytes", [350, 40])
def test_a_small_file_of_huge_text_is_refused_without_the_memory(tmp_path, megabytes):
    """A 1 MB Word file of 350 MB of text (and one of 40 MB, whose XML passes the first
    look): refused as too much text, while the reader's process and the bot's grow by
    less than 300 MB together (VmHWM of the bot, the largest child's maximum RSS)."""
    import subprocess
    import sys

    path = tmp_path / "huge.docx"
    docx_of_text(path, megabytes)
    assert path.stat().st_size < 2_000_000
    result = subprocess.run(
        [sys.executable, "-c", PEAK, str(path), "2000000"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    reason, sizes = result.stdout.split("\n")[:2]
    grown_kib, child_kib = map(int, sizes.split())
    assert reason == "FILE_TEXT_TOO_LARGE", result.stdout + result.stderr
    assert grown_kib + child_kib < 300 * 1024, (grown_kib, child_kib)
