"""The bearer token of an HTTP `Authorization` header (pure), read alike by the
ingestion API, the chat API and the MCP server: the scheme in any case, as HTTP has it
("bearer" from some clients)."""

from __future__ import annotations


def parse_bearer(header: str) -> str:
    """The token of `Authorization: Bearer <token>`; "" when there is none."""
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""
