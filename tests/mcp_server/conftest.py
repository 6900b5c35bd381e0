"""The MCP server over real HTTP, on the chat API's world: a knowledge base whose wiki
application verifies every reader token, and callers with tokens in one tokens file
(alice reads the salary bands, bob does not, the visitor has no reader)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bot.dev.synapse import free_port
from core.config.mcp import McpSettings
from core.mcp_server.service import start_mcp_service

# The chat API's world, shared: the same callers and documents.
from tests.chat_api.conftest import ChatWorld, chat_world, per_minute  # noqa: F401

Connect = Callable[[str], AbstractAsyncContextManager[Client]]


def connect_to(url: str, token: str | None) -> Client:
    """The SDK's own client over streamable HTTP, sending the token as a client does."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    return Client(streamable_http_client(url, http_client=http), cache=None)


@pytest.fixture
def mcp_limit() -> int:
    return 60


@pytest.fixture
async def mcp_url(chat_world: ChatWorld, mcp_limit: int) -> AsyncIterator[str]:  # noqa: F811
    """The MCP endpoint as `knowledge-api` serves it, with the chat API's tokens file."""
    port = free_port()
    chat_world.settings = chat_world.settings.model_copy(
        update={"mcp": McpSettings(enabled=True, port=port, requests_per_minute=mcp_limit)}
    )
    stop: Callable[[], Awaitable[None]] = await start_mcp_service(
        chat_world.kb, lambda: chat_world.settings
    )
    yield f"http://127.0.0.1:{port}/mcp"
    await stop()


@pytest.fixture
def connect(chat_world: ChatWorld, mcp_url: str) -> Connect:  # noqa: F811
    """A connected client for a caller of the tokens file ("alice", "bob", "visitor")."""
    return lambda name: connect_to(mcp_url, chat_world.tokens[name])
