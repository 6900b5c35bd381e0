"""What OCR costs and how well it reads: scanned pages per second through the reading
process (its start, pdfium's rendering at 300 dpi and tesseract included), and the
character accuracy on pages whose text is known (typeset by the bench, rendered to
pixels, put into an image-only PDF, then read back).

    .venv/bin/python -m tests.bench.bench_ocr [--pages 10] [--at-once 2]

Accuracy is 1 - (edit distance / length of the text), over words joined by single
spaces (line breaks are layout, not text). `--at-once` files are read at the same time
(one process each), as `[files] at_once` allows: on 2 cores, 2 use both.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from core.config.files import FileSettings
from core.knowledge.parse.blocks import SCANNED_MARK
from core.knowledge.parse.extractor import Extractor
from tests.support.files import make_scanned_text_pdf

KNOWN_PAGES = (
    "Travel policy. Trains are booked through Travelink, in second class, at least two weeks "
    "ahead. Hotels cost at most 140 euros a night in Paris and 110 euros elsewhere; the "
    "booking is made by the travel desk, extension 4242.",
    "Expenses. Receipts are filed within thirty days in the expenses tool, with the project "
    "code (for example PRJ-2027-118) and the cost centre. Meals are refunded up to 25.50 "
    "euros a day; taxis only after 22:00 or with luggage over 23 kg.",
    "Onboarding. New colleagues get their laptop on the first day from the IT desk in room "
    "204. The badge is collected at reception on the ground floor; the mail account is "
    "opened by the IT desk before noon. Questions: it-desk@example.org.",
)


def distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def accuracy(known: str, read: str) -> float:
    known, read = " ".join(known.split()), " ".join(read.split())
    return max(0.0, 1 - distance(known, read) / len(known))


async def main(pages: int, at_once: int) -> None:
    extractor = Extractor(
        lambda: FileSettings(timeout_seconds=3600, ocr_max_pages=10_000, at_once=at_once)
    )
    # Accuracy: each known page once.
    read = await extractor.extract(make_scanned_text_pdf(KNOWN_PAGES), "pdf", ("en",))
    scores = [
        accuracy(known, got.replace(SCANNED_MARK, ""))
        for known, got in zip(KNOWN_PAGES, read.content.split("\f"), strict=True)
    ]
    for number, score in enumerate(scores, 1):
        print(f"page {number}: character accuracy {score:.1%}")
    print(f"mean character accuracy: {sum(scores) / len(scores):.1%}")
    # Speed: `pages` scanned pages a file, `at_once` files at the same time.
    scan = make_scanned_text_pdf(KNOWN_PAGES, repeat=max(1, pages // len(KNOWN_PAGES)))
    count = max(1, pages // len(KNOWN_PAGES)) * len(KNOWN_PAGES)
    started = time.perf_counter()
    await asyncio.gather(*(extractor.extract(scan, "pdf", ("en",)) for _ in range(at_once)))
    seconds = time.perf_counter() - started
    print(
        f"{count * at_once} scanned pages ({at_once} files at once) in {seconds:.1f} s: "
        f"{count * at_once / seconds:.2f} pages/s"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=9)
    parser.add_argument("--at-once", type=int, default=1)
    args = parser.parse_args()
    asyncio.run(main(args.pages, args.at_once))
