"""What languages cost: detecting the language of a message, and writing the keyword
index in a collection's language.

    .venv/bin/python -m tests.bench.bench_languages

Prints figures; not part of the test run. The cost of a question searched in two
languages is in bench_knowledge ("with a translation").
"""

from __future__ import annotations

import os
import statistics
import time

from core.i18n.detection import LanguageFinder
from core.knowledge.search.keywords import build_index_text
from tests.bench.bench_knowledge import Prose, percentile, rss_mib

MESSAGES = [
    "Wie richte ich die Streaming-Replikation zwischen zwei Servern ein?",
    "Comment configurer la réplication en continu entre deux serveurs ?",
    "¿Cómo configuro la replicación en streaming entre dos servidores?",
    "How do I set up streaming replication between two servers?",
    "ok",
    "!catchup desde el lunes",
]


def bench_detection(rounds: int = 500) -> None:
    finder = LanguageFinder()
    before = rss_mib()
    started = time.perf_counter()
    finder.find(MESSAGES[0])
    first = time.perf_counter() - started
    timings = []
    for n in range(rounds):
        started = time.perf_counter()
        finder.find(MESSAGES[n % len(MESSAGES)])
        timings.append((time.perf_counter() - started) * 1000)
    print("language detection (lingua, 8 languages):")
    print(f"  first message (loads the models) {first:5.2f} s, +{rss_mib() - before:.0f} MiB")
    print(
        f"  then p50 {statistics.median(timings):5.2f} ms   p95 "
        f"{percentile(timings, 0.95):5.2f} ms per message"
    )


def bench_index_text(chunks: int = 5_000) -> None:
    prose = Prose(seed=4)
    texts = [prose.paragraph() for _ in range(chunks)]
    print(f"keyword index text ({chunks:,} chunks of prose, Snowball stems):")
    for language in ("en", "de", "fr", "es"):
        started = time.perf_counter()
        for text in texts:
            build_index_text(text, language)
        rate = chunks / (time.perf_counter() - started)
        print(f"  {language}: {rate:8.0f} chunks/s")


def main() -> None:
    print(f"machine: {os.cpu_count()} CPUs")
    bench_detection()
    bench_index_text()


if __name__ == "__main__":
    main()
