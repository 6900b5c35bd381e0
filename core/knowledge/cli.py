"""`knowledge-ingest`: put files and folders into a collection, with a progress bar.

knowledge-ingest --config config.toml --collection handbook docs/ faq.jsonl [--dry-run]

Reads Markdown, text, HTML, JSON lines, and PDF and Word (.docx) files.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from core.config import ConfigError, Settings, load_config
from core.knowledge.base import KnowledgeBase
from core.knowledge.documents import Document
from core.knowledge.files import FileProblem, read_documents
from core.knowledge.indexer import Outcome
from core.privacy import keep_private
from core.storage.database import StorageError

GROUP = 16


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="knowledge-ingest", description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="files and folders to ingest")
    parser.add_argument(
        "--config", type=Path, default=Path(os.environ.get("BOT_CONFIG", "config.toml"))
    )
    parser.add_argument("--collection", required=True, help="a collection from the config")
    parser.add_argument(
        "--dry-run", action="store_true", help="show what would change, change nothing"
    )
    parser.add_argument(
        "--root", type=Path, help="ids relative to this folder, whichever folders are named "
        "(default: relative to each folder named)",
    )  # fmt: skip
    parser.add_argument(
        "--base-url", default="", help="link of a file: this URL followed by its id "
        "(a Markdown file's front matter `url` wins)",
    )  # fmt: skip
    return parser.parse_args(argv)


async def ingest(kb: KnowledgeBase, documents: list[Document], dry_run: bool) -> Counter:
    counts: Counter = Counter()
    bar = tqdm(total=len(documents), unit="doc", file=sys.stderr, desc="ingesting")
    for start in range(0, len(documents), GROUP):
        group = documents[start : start + GROUP]
        if dry_run:
            for document in group:
                decision = await kb.indexer.decide(document)
                counts[decision] += 1
                if decision != "unchanged":
                    tqdm.write(f"would {'add' if decision == 'new' else 'update'} {document.id}")
        else:
            before = {d.id: await kb.indexer.decide(d) for d in group}
            outcomes: list[Outcome] = await kb.indexer.put_many(group)
            for outcome in outcomes:
                counts[before[outcome.doc_id] if outcome.status == "indexed" else "unchanged"] += 1
                counts["chunks"] += outcome.chunks
        bar.update(len(group))
    bar.close()
    return counts


async def open_and_ingest(settings: Settings, documents: list[Document], dry_run: bool) -> Counter:
    kb = await KnowledgeBase.open(lambda: settings)
    try:
        return await ingest(kb, documents, dry_run)
    finally:
        await kb.close()


def summary(counts: Counter, problems: int, dry_run: bool) -> str:
    verb = "would be " if dry_run else ""
    parts = [
        f"{counts['new']} {verb}added",
        f"{counts['changed']} {verb}updated",
        f"{counts['unchanged']} unchanged",
        f"{problems} unreadable",
    ]
    chunks = "" if dry_run else f" ({counts['chunks']} chunks written)"
    return ", ".join(parts) + chunks


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        settings: Settings = load_config(
            args.config, os.environ, skip_secrets=frozenset({"matrix", "sources"})
        )
    except ConfigError as exc:
        print(f"The config is not valid:\n{exc}", file=sys.stderr)
        return 2
    if args.collection not in settings.collections:
        known = ", ".join(settings.collections) or "none"
        print(f"There is no collection {args.collection!r} (configured: {known}).", file=sys.stderr)
        return 2
    keep_private(settings.bot.data_dir)
    documents, problems = [], 0
    found = read_documents(
        args.paths, args.collection, root=args.root, base_url=args.base_url,
        limits=settings.files,
    )  # fmt: skip
    for item in found:
        if isinstance(item, FileProblem):
            problems += 1
            print(f"skipped: {item}", file=sys.stderr)
        else:
            documents.append(item)
    try:
        counts = asyncio.run(open_and_ingest(settings, documents, args.dry_run))
    except StorageError as exc:
        print(f"The storage could not be opened: {exc}", file=sys.stderr)
        return 2
    print(summary(counts, problems, args.dry_run))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
