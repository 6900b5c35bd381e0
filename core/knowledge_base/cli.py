"""`knowledge-ingest`: put files and folders into a collection, with a progress bar.

knowledge-ingest --config config.toml --collection handbook docs/ faq.jsonl [--dry-run]

Reads Markdown, text, HTML, JSON lines, and PDF and Word (.docx) files. While the bot
(or `knowledge-api`) runs with its ingestion API on, the documents go through that API:
a running bot keeps the embedded Chroma's index in memory and would not see another
process's writes until it restarts.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import functools
import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import aiohttp
from tqdm import tqdm

from core.config import ConfigError, Settings, load_config
from core.knowledge.documents import Document
from core.knowledge.ingest.indexer import Outcome
from core.knowledge.ingest.realign import realign_models
from core.knowledge.parse.extraction import SUFFIX_KINDS
from core.knowledge.parse.files import FileProblem, read_documents
from core.knowledge_base.api import PREFIX
from core.knowledge_base.base import KnowledgeBase
from core.privacy import keep_private
from core.storage.database import StorageError

GROUP = 16
# How long the ingestion API may take to say it is there.
PROBE_SECONDS = 2


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
        "--root",
        type=Path,
        help="ids relative to this folder, whichever folders are named "
        "(default: relative to each folder named)",
    )
    parser.add_argument(
        "--base-url",
        default="",
        help="link of a file: this URL followed by its id "
        "(a Markdown file's front matter `url` wins)",
    )
    return parser.parse_args(argv)


async def ingest(kb: KnowledgeBase, documents: list[Document], dry_run: bool) -> Counter:
    counts: Counter = Counter()
    if not dry_run:  # a collection whose model changed is embedded again first
        await realign_models(kb.catalog, kb.vectors, kb.embedders, kb.indexer.settings)
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


def api_address(settings: Settings) -> str:
    """Where the ingestion API of a running bot (or `knowledge-api`) of this config
    answers, or "" when it is off."""
    api = settings.ingest_api
    if not api.enabled:
        return ""
    host = "127.0.0.1" if api.host in ("0.0.0.0", "::", "") else api.host
    return f"http://{host}:{api.port}{PREFIX}"


async def api_answers(address: str) -> bool:
    """Whether the ingestion API answers there (a bot or `knowledge-api` runs)."""
    try:
        timeout = aiohttp.ClientTimeout(total=PROBE_SECONDS)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            async with http.get(f"{address}/openapi.json") as response:
                return response.status == 200
    except (aiohttp.ClientError, TimeoutError):
        return False


def api_body(document: Document, file: Path | None) -> dict[str, str]:
    """The document as the API takes it: a PDF or Word file as itself (base64), for the
    bot to read, the rest as its text."""
    body = {
        "title": document.title,
        "url": document.url,
        "language": document.language,
        "version": document.version,
        "date": document.date,
        "date_end": document.date_end,
    }
    if document.format == "paged" and file is not None:
        body["format"] = SUFFIX_KINDS[file.suffix.lower()]
        body["content_base64"] = base64.b64encode(file.read_bytes()).decode()
    else:
        body.update(format=document.format, content=document.content)
    return body


def file_of(doc_id: str, paths: list[Path], root: Path | None) -> Path | None:
    """The file a document was read from (ids are paths below `root` or a folder named)."""
    for folder in [root] if root is not None else paths:
        candidate = folder / doc_id if folder.is_dir() else folder
        if candidate.is_file() and (folder.is_dir() or folder.name == doc_id):
            return candidate
    return None


async def ingest_through_api(
    address: str, token: str, documents: list[Document], files: Callable[[str], Path | None]
) -> tuple[Counter, int]:
    """Put each document through the running bot's ingestion API (waiting for each to be
    indexed); the counts, and how many the API refused."""
    counts: Counter = Counter()
    refused = 0
    headers = {"Authorization": f"Bearer {token}"}
    bar = tqdm(total=len(documents), unit="doc", file=sys.stderr, desc="ingesting")
    async with aiohttp.ClientSession(headers=headers) as http:
        for document in documents:
            collection, doc_id = quote(document.collection), quote(document.id)
            path = f"{address}/collections/{collection}/documents/{doc_id}"
            async with http.get(path) as response:
                before = await response.json()
            indexed = before.get("indexed") or {}
            if indexed.get("content_hash") == document.content_hash():
                counts["unchanged"] += 1
            else:
                body = api_body(document, files(document.id))
                async with http.put(path, params={"wait": "true"}, json=body) as response:
                    status = await response.json()
                if response.status in (200, 202) and status.get("state") != "failed":
                    counts["changed" if indexed else "new"] += 1
                    counts["chunks"] += (status.get("indexed") or {}).get("chunks", 0)
                else:
                    refused += 1
                    reason = status.get("error", {})
                    reason = reason.get("message", reason) if isinstance(reason, dict) else reason
                    tqdm.write(f"skipped: {document.id}: {reason}", file=sys.stderr)
            bar.update(1)
    bar.close()
    return counts, refused


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
        args.paths,
        args.collection,
        root=args.root,
        base_url=args.base_url,
        limits=settings.files,
        languages=(settings.language_of(args.collection),),
    )
    for item in found:
        if isinstance(item, FileProblem):
            problems += 1
            print(f"skipped: {item}", file=sys.stderr)
        else:
            documents.append(item)
    address = api_address(settings)
    if not args.dry_run and address and asyncio.run(api_answers(address)):
        source = settings.collections[args.collection].source
        token = settings.sources[source].api_token()
        if not token:
            variable = settings.sources[source].token_env or "token_env"
            print(
                f"The bot runs (its ingestion API answers at {address}) and would not see "
                "documents written beside it until it restarts: set the token of "
                f"[sources.{source}] ({variable}) so that they go through the API, or "
                "stop the bot first.",
                file=sys.stderr,
            )
            return 2
        print(f"The bot runs: the documents go through its ingestion API at {address}.")
        files = functools.partial(file_of, paths=args.paths, root=args.root)
        counts, refused = asyncio.run(ingest_through_api(address, token, documents, files))
        print(summary(counts, problems + refused, False))
        return 1 if problems or refused else 0
    try:
        counts = asyncio.run(open_and_ingest(settings, documents, args.dry_run))
    except StorageError as exc:
        print(f"The storage could not be opened: {exc}", file=sys.stderr)
        return 2
    print(summary(counts, problems, args.dry_run))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
