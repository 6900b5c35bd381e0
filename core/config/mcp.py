"""Settings of the MCP server: the knowledge as Model Context Protocol tools (search,
fetch, list_collections) for assistants whose own model writes the answer (Claude
Desktop, Cursor, Open WebUI…). Its callers are the chat API's: one tokens file."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationInfo, field_validator

from core.config.secrets import existing_file
from core.config.strict import Strict


class McpSettings(Strict):
    """`[mcp]`: the MCP server, streamable HTTP on a port of its own. `enabled`, `host`,
    `port` and `path` apply on a restart; the rest applies live."""

    enabled: bool = False
    """Serve the MCP server, from the bot and from `knowledge-api`."""
    host: str = "127.0.0.1"
    """The address the MCP server listens on."""
    port: int = Field(default=8091, ge=1, le=65535)
    """The port the MCP server listens on (a port of its own)."""
    path: str = Field(default="/mcp", pattern=r"^/[A-Za-z0-9/_-]*$")
    """Where clients connect: http://host:port/mcp"""
    tokens_file: Path | None = None
    """Who may call: lines `[tokens.<name>] sha256 = "…" reader = "@alice:example.org"`
    (`knowledge-api new-token` writes them). Unset: the chat API's tokens file, so that
    one token serves a person's chat client and their MCP client alike."""
    requests_per_minute: int = Field(default=60, ge=1, le=10_000)
    """Per token; over it, an error result that says when to try again."""
    collections: tuple[str, ...] = ()
    """The collections the tools search; empty: every collection but the rooms' own
    (shared files and summaries, which are never reachable here)."""
    max_results: int = Field(default=20, ge=1, le=100)
    """The most passages one search returns (a caller's `limit` is capped to it)."""
    max_document_chars: int = Field(default=100_000, ge=1_000, le=2_000_000)
    """The most characters `fetch` returns of one document; the rest is cut, and said so."""

    @field_validator("tokens_file")
    @classmethod
    def _readable(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        return None if value is None else existing_file(value, info, "tokens file")


def check_mcp(mcp: McpSettings, collections: set[str]) -> McpSettings:
    """The collections [mcp] names are configured ones."""
    for collection in mcp.collections:
        if collection not in collections:
            raise ValueError(f"collections: {collection!r} is not a [collections] entry")
    return mcp
