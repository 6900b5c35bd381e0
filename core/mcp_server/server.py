"""The MCP server: the official SDK's server (`mcp`), streamable HTTP, stateless (any
process serving it answers any call), with three tools over the knowledge.

Every HTTP request names its caller by bearer token (the chat API's tokens file): one
without a known token gets 401 before the SDK sees it. The tools look the token up again
on each call, so that a token deleted from the file stops working at once, and each call
counts against the token's rate limit. Refusals are tool errors whose text is for people.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from pydantic import Field, ValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

from core.bearer import parse_bearer
from core.chat_api.tokens import Caller, TokenBook
from core.config import Settings
from core.guardrails.rate_store import RateLimits
from core.mcp_server.shapes import (
    DATA_NOTE,
    Collections,
    DocumentText,
    Refusal,
    SearchResults,
    build_collections_text,
    build_document_text,
    build_search_text,
)
from core.mcp_server.tools import KnowledgeTools

log = logging.getLogger(__name__)
MISSING_TOKEN = "Invalid or missing token. Send it as 'Authorization: Bearer <token>'."
INSTRUCTIONS = (
    "Search the organisation's documents that the caller may read, and read them whole. "
    "Cite documents by their `id`, title and link. " + DATA_NOTE
)


def find_bearer(headers: Any) -> str:
    """The bearer token of an `Authorization` header ("" when there is none)."""
    return parse_bearer(str(headers.get("authorization", "") if headers else ""))


def build_arguments_error(tool: str, error: ValidationError) -> str:
    """A tool's rejected arguments, named for people (never their values)."""
    problems = "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'the arguments'}: {item['msg']}"
        for item in error.errors()
    )
    return f"The arguments of {tool} are not valid ({problems})."


class KnowledgeMcp(MCPServer):
    """The SDK's server with the tool errors phrased for people."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, Refusal):
                raise ToolError(str(cause)) from None
            if isinstance(cause, ValidationError):
                raise ToolError(build_arguments_error(name, cause)) from None
            if str(exc).startswith("Unknown tool"):
                tools = ", ".join(tool.name for tool in await self.list_tools())
                raise ToolError(f"There is no tool '{name}'; the tools are {tools}.") from None
            raise


def build_mcp_server(
    tools: KnowledgeTools,
    tokens: TokenBook,
    limits: RateLimits,
    settings: Callable[[], Settings],
) -> KnowledgeMcp:
    # The release, as clients show whom they talk to (the package's metadata; a source
    # tree run without installing has none).
    try:
        release = version("matrix-knowledge-bot")
    except PackageNotFoundError:
        release = "unknown"
    server = KnowledgeMcp("knowledge", instructions=INSTRUCTIONS, version=release)

    async def caller_of(ctx: Context) -> Caller:
        caller = tokens.find(find_bearer(ctx.headers))
        if caller is None:
            raise Refusal("This token is not accepted (any more).")
        per_minute = settings().mcp.requests_per_minute
        if await limits.allows({f"mcp:{caller.name}": per_minute}):
            raise Refusal(
                f"Rate limit reached: {per_minute} calls a minute for this token; "
                "try again in a minute."
            )
        return caller

    async def guarded(work: Callable[[], Awaitable[CallToolResult]]) -> CallToolResult:
        try:
            return await work()
        except Refusal:
            raise
        except Exception as exc:
            reference = uuid.uuid4().hex[:8]
            # The type only: an exception's text may hold a document's.
            log.error("an MCP tool failed (reference %s): %s", reference, type(exc).__name__)
            raise Refusal(f"The server failed (reference {reference}).") from None

    @server.tool(
        description="Search the organisation's documents you may read (hybrid search, each "
        "document checked with the application that owns it). Returns passages with their "
        "document's `id` (for `fetch`), title, link and section. " + DATA_NOTE
    )
    async def search(
        query: Annotated[str, Field(description="What to look for, in any language.")],
        ctx: Context,
        collections: Annotated[
            list[str] | None,
            Field(description="Only these collections (list_collections names them)."),
        ] = None,
        limit: Annotated[int, Field(description="The most passages to return.")] = 8,
    ) -> Annotated[CallToolResult, SearchResults]:
        async def work() -> CallToolResult:
            found = await tools.search(await caller_of(ctx), query, collections, limit)
            return _result(build_search_text(found), found.model_dump(mode="json"))

        return await guarded(work)

    @server.tool(
        description="Read a whole document you may read, by the `id` a search result gave "
        "(collection:document). " + DATA_NOTE
    )
    async def fetch(
        document_id: Annotated[str, Field(description="The `id` of a search result.")],
        ctx: Context,
    ) -> Annotated[CallToolResult, DocumentText]:
        async def work() -> CallToolResult:
            document = await tools.fetch(await caller_of(ctx), document_id)
            return _result(build_document_text(document), document.model_dump(mode="json"))

        return await guarded(work)

    @server.tool(description="The collections of documents you may search, described.")
    async def list_collections(ctx: Context) -> Annotated[CallToolResult, Collections]:
        async def work() -> CallToolResult:
            found = tools.list_collections(await caller_of(ctx))
            return _result(build_collections_text(found), found.model_dump(mode="json"))

        return await guarded(work)

    return server


def _result(text: str, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def build_token_gate(app: ASGIApp, tokens: TokenBook) -> ASGIApp:
    """The app behind a check of every HTTP request's bearer token (401 otherwise)."""
    reported: list[str | None] = [None]

    async def gate(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        caller = tokens.find(find_bearer(headers))
        if tokens.problem != reported[0]:
            reported[0] = tokens.problem
            if tokens.problem:
                log.error(
                    "the tokens file cannot be used, so no MCP token is accepted "
                    "until it is mended: %s",
                    tokens.problem,
                )
        if caller is None:
            body = json.dumps({"error": "invalid_token", "error_description": MISSING_TOKEN})
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer error="invalid_token"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body.encode()})
            return
        await app(scope, receive, send)

    return gate
