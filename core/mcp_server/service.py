"""The MCP server as a service of a knowledge process (the bot's or `knowledge-api`),
served by uvicorn (the SDK's app is ASGI) inside the process's own event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable, Iterator

import uvicorn

from core.chat_api.tokens import TokenBook
from core.config import Settings
from core.guardrails.rate_store import LocalRateLimits
from core.knowledge_base.base import KnowledgeBase
from core.mcp_server.server import build_mcp_server, build_token_gate
from core.mcp_server.tools import KnowledgeTools

log = logging.getLogger(__name__)


class EmbeddedServer(uvicorn.Server):
    """uvicorn inside a process that owns its signals: the bot stops it, not Ctrl-C."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def bind_socket(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so that a port in use raises OSError (which the
    supervisor reports) instead of uvicorn's exit."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


async def start_mcp_service(
    kb: KnowledgeBase, settings: Callable[[], Settings]
) -> Callable[[], Awaitable[None]]:
    """Serve the MCP server as `[mcp]` says; returns what stops it."""
    config = settings().mcp
    # Searches read the question's language (core/knowledge/search/across.py): the
    # detector loads now, not at the first search, where it would stall the server ~2 s.
    await kb.retriever.languages.load()
    tokens = TokenBook(config.tokens_file or settings().chat_api.tokens_file)
    # Per process, as the chat API's: several processes each count their own minute.
    server = build_mcp_server(KnowledgeTools(kb, settings), tokens, LocalRateLimits(), settings)
    app = server.streamable_http_app(
        streamable_http_path=config.path,
        stateless_http=True,
        json_response=True,
        host=config.host,
    )
    sock = bind_socket(config.host, config.port)
    uv = EmbeddedServer(
        uvicorn.Config(
            build_token_gate(app, tokens), log_config=None, access_log=False, lifespan="on"
        )
    )
    serving = asyncio.create_task(uv.serve(sockets=[sock]))
    while not uv.started:
        if serving.done():
            sock.close()
            serving.result()  # its exception, if any
            raise OSError("the MCP server stopped while starting")
        await asyncio.sleep(0.05)
    log.info("MCP server listening on http://%s:%d%s", config.host, config.port, config.path)

    async def stop() -> None:
        uv.should_exit = True
        await serving
        sock.close()

    return stop
