"""A summary without a model over a long room: the time of its parts.

    .venv/bin/python -m tests.bench.bench_extractive [--messages 2000]

The room is the labelled logs' messages (tests/data/summaries, every folder) in turn,
repeated up to --messages. It is summarised as `!summarize` does without a model: with
the small-talk model (the bundled multilingual e5 embeds every message of 6 words or
more) and without it (no embedding models: the cue phrases alone), and prints the
seconds of each and of the small-talk step alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from core.knowledge.search.embedding import Embedders
from core.llm.prompts import load_prompts
from core.summaries.draft import SummaryLine
from core.summaries.smalltalk import fetch_smalltalk
from core.summaries.summarizer import Summarizer

LOGS = Path(__file__).resolve().parents[1] / "data" / "summaries"


def build_room(size: int) -> list[SummaryLine]:
    said = [
        (m["sender"].split(":")[0].lstrip("@"), m["text"])
        for path in sorted(LOGS.rglob("*.json"))
        for m in json.loads(path.read_text(encoding="utf-8"))["messages"]
    ]
    return [
        SummaryLine(
            n,
            said[n % len(said)][0],
            said[n % len(said)][1],
            1e9 + 30 * n,
            f"https://l/{n}",
            f"$e{n}",
        )
        for n in range(size)
    ]


async def main(size: int) -> None:
    lines = build_room(size)
    embedders = Embedders()
    for name, given in (("with the small-talk model", embedders), ("cue phrases alone", None)):
        summarizer = Summarizer(None, load_prompts, given)
        # The models and the stop words load once per process, not per summary.
        await summarizer.summarize(lines[:40], "**S**", timezone="UTC", part_tokens=3000)
        started = time.perf_counter()
        result = await summarizer.summarize(lines, "**S**", timezone="UTC", part_tokens=3000)
        seconds = time.perf_counter() - started
        quoted = result.markdown.count("([message](")
        print(f"{size} messages, {name}: {seconds:.2f} s, {quoted} quoted")
    started = time.perf_counter()
    await fetch_smalltalk(lines, embedders)
    print(f"the small-talk step alone: {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    asyncio.run(main(parser.parse_args().messages))
