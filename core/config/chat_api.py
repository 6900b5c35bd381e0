"""Settings of the chat API: the knowledge as OpenAI-compatible models ("assistants")
that any chat client can use, each caller with a bearer token naming their reader."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, ValidationInfo, field_validator

from core.config.knowledge import NAME_PATTERN
from core.config.llm import LlmTaskSettings
from core.config.placeholders import check_template
from core.config.secrets import existing_file
from core.config.strict import Strict


class ChatApiSettings(Strict):
    """[restart] `/v1/chat/completions` and `/v1/models` on a port of their own (people's
    chat clients call it; the ingestion API stays for source applications)."""

    enabled: bool = False
    """The knowledge as an OpenAI-compatible API for chat clients: /v1/chat/completions and
    /v1/models on a port of its own, served by the bot and by `knowledge-api`. Each
    [assistants.<name>] below is one of its models."""
    host: str = "127.0.0.1"
    """The address the chat API listens on (a port of its own: people call it, source applications
    call the ingestion API)."""
    port: int = Field(default=8089, ge=1, le=65535)
    """The port the chat API listens on."""
    tokens_file: Path | None = None
    """Who may call, as lines `[tokens.<name>] sha256 = "…" reader = "@alice:example.org"`
    (`knowledge-api new-token` writes them); read again when the file changes."""
    requests_per_minute: int = Field(default=20, ge=1, le=10_000)
    """Per token; over it, 429 in OpenAI's shape (clients wait and retry)."""
    history_messages: int = Field(default=8, ge=0, le=100)
    """The client's conversation sent as context: at most this many earlier messages."""

    @field_validator("tokens_file")
    @classmethod
    def _readable(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        return None if value is None else existing_file(value, info, "tokens file")


class AssistantSettings(Strict):
    """An `[assistants.<name>]` section: one model of the chat API."""

    collections: tuple[str, ...] = ()
    """The collections it answers from; empty: every collection."""
    description: str = ""
    """What the assistant is, listed by GET /v1/models."""
    answer_system: str | None = None
    """The answer's system prompt for this assistant (as `[prompts.answer] system`)."""
    # Another model or endpoint for its answers; what is unset comes from [llm].
    llm: LlmTaskSettings | None = None

    @field_validator("answer_system")
    @classmethod
    def _known_placeholders(cls, value: str | None) -> str | None:
        return None if value is None else check_template("answer", "system", value)


def check_assistants(
    assistants: dict[str, AssistantSettings], collections: set[str]
) -> dict[str, AssistantSettings]:
    """Assistant names are safe identifiers, and each names configured collections."""
    for name, assistant in assistants.items():
        if not re.match(NAME_PATTERN, name):
            raise ValueError(f"the name {name!r} must match {NAME_PATTERN}")
        for collection in assistant.collections:
            if collection not in collections:
                raise ValueError(f"{name}.collections: {collection!r} is not a [collections] entry")
    return assistants
