"""What reading shared files costs, and whether a burst of them slows answers.

    .venv/bin/python -m tests.bench.bench_files [--pages 60] [--burst 50]

1. A PDF of `pages` pages and a Word document of as many paragraphs: extracted in the
   extraction process (pages per second, the process's start included), then indexed
   with the real embedding model into embedded Chroma (pages per second).
2. The bot's logic on a fake account (tests/bot/harness.py) with the real extractor and
   indexer: the time from a question to its answer, alone, then sent right after a burst
   of `burst` PDFs of 5 pages shared in the same room. The answerer is scripted (no
   model): what is measured is what the files take from the questions (the workers, the
   event loop, the CPU that extraction and embedding share with them).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from core.config.files import FileSettings
from core.knowledge.documents import Document
from core.knowledge.parse.extractor import Extractor
from core.knowledge_base.base import KnowledgeBase
from tests.bot.harness import FileReading, running_bot
from tests.bot.test_files import FILES
from tests.knowledge.conftest import knowledge_settings
from tests.support.files import make_docx, make_pdf

ANN, BEN = "@ann:fake.test", "@ben:fake.test"


def paragraphs(pages: int) -> tuple[str, ...]:
    return tuple(
        f"Page {n}. The travel policy says that trains are booked two weeks ahead, that "
        f"hotels cost at most {100 + n} euros a night, and that receipts are filed within "
        "thirty days in the expenses tool, with the project code." * 3
        for n in range(pages)
    )


async def extraction_and_indexing(pages: int, folder: Path) -> None:
    extractor = Extractor(lambda: FileSettings())
    pdf = make_pdf(paragraphs(pages), table=False)
    started = time.perf_counter()
    read = await extractor.extract(pdf, "pdf")
    extract_seconds = time.perf_counter() - started
    started = time.perf_counter()
    await extractor.extract(make_docx(filler_paragraphs=pages), "docx")
    docx_seconds = time.perf_counter() - started

    settings = knowledge_settings(folder)
    kb = await KnowledgeBase.open(lambda: settings)
    try:
        await kb.indexer.put_many([Document("handbook", "warm-up", "Warm-up", "Warm the model.")])
        started = time.perf_counter()
        [outcome] = await kb.indexer.put_many(
            [Document("handbook", "policy.pdf", "Policy", read.content, read.format)]
        )
        index_seconds = time.perf_counter() - started
    finally:
        await kb.close()
    print(
        f"PDF of {pages} pages: extracted in {extract_seconds:.2f} s "
        f"({pages / extract_seconds:.0f} pages/s, process start included); "
        f"indexed in {index_seconds:.2f} s ({pages / index_seconds:.1f} pages/s, "
        f"{outcome.chunks} chunks)"
    )
    print(f"Word document of {pages} long paragraphs: extracted in {docx_seconds:.2f} s")


async def latency_during_a_burst(burst: int, folder: Path) -> None:
    settings = knowledge_settings(folder, extra=FILES)
    kb = await KnowledgeBase.open(lambda: settings)
    pdf = make_pdf(paragraphs(5), table=False)
    try:
        await kb.indexer.put_many([Document("handbook", "warm-up", "Warm-up", "Warm the model.")])
        reading = FileReading(kb.extractor, kb.indexer)
        async with running_bot(folder, FILES, files=reading) as bot:
            bot.account.add_room("!r", [ANN, BEN])
            alone = []
            for _ in range(5):
                started = time.perf_counter()
                await bot.reply_to(bot.ask("!r", BEN, "when is the release?"), timeout=120)
                alone.append(time.perf_counter() - started)
            for n in range(burst):
                url = f"mxc://fake.test/policy-{n}"
                bot.account.media[url] = pdf
                bot.account.say(
                    "!r",
                    ANN,
                    f"policy-{n}.pdf",
                    msgtype="m.file",
                    url=url,
                    info={"mimetype": "application/pdf"},
                )
            during = []
            burst_started = time.perf_counter()
            for _ in range(5):
                started = time.perf_counter()
                await bot.reply_to(bot.ask("!r", BEN, "when is the release?"), timeout=120)
                during.append(time.perf_counter() - started)
            # The catalog has no event to wait on: read again until every file is in.
            while (await kb.catalog.collection_sizes()).get("room-files", (0, 0))[0] < burst:  # noqa: ASYNC110
                await asyncio.sleep(0.5)
            burst_seconds = time.perf_counter() - burst_started
    finally:
        await kb.close()
    print(
        f"answer latency alone: p50 {statistics.median(alone) * 1000:.0f} ms, "
        f"max {max(alone) * 1000:.0f} ms"
    )
    print(
        f"answer latency during a burst of {burst} PDFs (5 pages each): p50 "
        f"{statistics.median(during) * 1000:.0f} ms, max {max(during) * 1000:.0f} ms; "
        f"the burst was read and indexed in {burst_seconds:.1f} s "
        f"({burst * 5 / burst_seconds:.1f} pages/s)"
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=60)
    parser.add_argument("--burst", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        await extraction_and_indexing(args.pages, Path(one))
        await latency_during_a_burst(args.burst, Path(two))


if __name__ == "__main__":
    asyncio.run(main())
