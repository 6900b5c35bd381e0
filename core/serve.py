"""The knowledge services of a process: the ingestion queue worker, the crawls of
crawled sources (where this process indexes), the REST API, the chat API and the MCP
server.

They run inside the bot (`[ingest_api] enabled = true`), or on their own:

    knowledge-api --config config.toml
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from core.chat_api.service import new_token_main, start_chat_service
from core.config import ConfigError, Settings, load_config
from core.knowledge.ingest.realign import realign_models
from core.knowledge_base.api import IngestApi, start_ingest_api
from core.knowledge_base.base import KnowledgeBase
from core.knowledge_base.crawl.schedule import CrawlService
from core.mcp_server.service import start_mcp_service
from core.privacy import LibraryContentFilter, keep_private, quiet_libraries
from core.storage.database import StorageError
from core.supervise import ServiceUnavailable, Supervisor, build_listen_error

log = logging.getLogger(__name__)


async def run_knowledge_services(
    kb: KnowledgeBase, settings: Callable[[], Settings], supervisor: Supervisor | None = None
) -> None:
    """The queue worker and crawls (unless `knowledge.indexing` is off) and, when
    enabled, the ingestion API, the chat API and the MCP server, until cancelled. Each
    runs supervised on its own, so that an API whose port is taken is reported and tried
    again while the queue goes on (and the other way round)."""
    keeper = supervisor or Supervisor()
    async with asyncio.TaskGroup() as group:
        if settings().ingest_api.enabled:
            group.create_task(
                keeper.keep_running("ingestion API", lambda: _serve_ingest(kb, settings))
            )
        if settings().chat_api.enabled:
            group.create_task(keeper.keep_running("chat API", lambda: _serve_chat(kb, settings)))
        if settings().mcp.enabled:
            group.create_task(keeper.keep_running("MCP server", lambda: _serve_mcp(kb, settings)))
        group.create_task(keeper.keep_running("ingestion", lambda: _run_indexing(kb, settings)))


async def _serve_ingest(kb: KnowledgeBase, settings: Callable[[], Settings]) -> None:
    api = settings().ingest_api

    async def start() -> Callable[[], Awaitable[None]]:
        runner = await start_ingest_api(IngestApi(kb, settings), api.host, api.port)
        return runner.cleanup

    await _serve("ingestion API", api.host, api.port, "ingest_api.port", start)


async def _serve_chat(kb: KnowledgeBase, settings: Callable[[], Settings]) -> None:
    api = settings().chat_api
    await _serve(
        "chat API", api.host, api.port, "chat_api.port", lambda: start_chat_service(kb, settings)
    )


async def _serve_mcp(kb: KnowledgeBase, settings: Callable[[], Settings]) -> None:
    mcp = settings().mcp
    await _serve(
        "MCP server", mcp.host, mcp.port, "mcp.port", lambda: start_mcp_service(kb, settings)
    )


async def _serve(
    service: str,
    host: str,
    port: int,
    setting: str,
    start: Callable[[], Awaitable[Callable[[], Awaitable[None]]]],
) -> None:
    """Run a service until cancelled; one that cannot listen says why, for admins."""
    try:
        stop = await start()
    except OSError as exc:
        raise ServiceUnavailable(build_listen_error(service, host, port, setting, exc)) from None
    try:
        await asyncio.Event().wait()
    finally:
        await stop()


async def _run_indexing(kb: KnowledgeBase, settings: Callable[[], Settings]) -> None:
    # Load the default model now rather than on the first question.
    await asyncio.to_thread(kb.embedders.get, settings().knowledge.embedding_model)
    if not settings().knowledge.indexing:
        log.info("indexing is left to other processes ([knowledge] indexing = false)")
        return
    # Before the queue: a document put meanwhile would meet the old model.
    await realign_models(kb.catalog, kb.vectors, kb.embedders, settings)
    async with asyncio.TaskGroup() as group:
        group.create_task(kb.queue.run())
        group.create_task(CrawlService(kb, kb.crawls, settings).run())


async def serve_alone(settings: Settings) -> None:
    kb = await KnowledgeBase.open(lambda: settings)
    try:
        await run_knowledge_services(kb, lambda: settings)
    finally:
        await kb.close()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["new-token"]:
        return new_token_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="knowledge-api",
        description="Run the ingestion API, the chat API and the MCP server alone "
        "(`knowledge-api new-token --help`: a token for the chat API).",
    )
    parser.add_argument(
        "--config", type=Path, default=Path(os.environ.get("BOT_CONFIG", "config.toml"))
    )
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for handler in logging.getLogger().handlers:
        handler.addFilter(LibraryContentFilter())
    try:
        settings = load_config(args.config, os.environ, skip_secrets=frozenset({"matrix"}))
    except ConfigError as exc:
        print(f"The config is not valid:\n{exc}", file=sys.stderr)
        return 2
    crawls = any(source.crawl for source in settings.sources.values())
    if not (
        settings.ingest_api.enabled or settings.chat_api.enabled or settings.mcp.enabled or crawls
    ):
        print(
            "[ingest_api], [chat_api] and [mcp] are not enabled and no source is crawled; "
            "nothing to run.",
            file=sys.stderr,
        )
        return 2
    quiet_libraries()
    keep_private(settings.bot.data_dir)
    try:
        asyncio.run(serve_alone(settings))
    except KeyboardInterrupt:
        pass
    except StorageError as exc:
        print(f"The storage could not be opened: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
