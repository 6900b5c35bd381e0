"""The chat API as a service of a knowledge process (the bot's or `knowledge-api`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from core.chat_api.assistants import Assistants
from core.chat_api.server import ChatApi, start_chat_api
from core.chat_api.tokens import TokenBook, build_token_entry
from core.config import Settings
from core.guardrails.rate_store import LocalRateLimits
from core.knowledge_base.base import KnowledgeBase
from core.llm.prompts import Prompts, load_prompts


class CurrentPrompts:
    """The prompts of the running config, read again only when the overrides change."""

    def __init__(self, settings: Callable[[], Settings]) -> None:
        self.settings = settings
        self._loaded: tuple[dict[str, Any], Prompts] | None = None

    def __call__(self) -> Prompts:
        overrides = self.settings().prompts.overrides()
        if self._loaded is None or self._loaded[0] != overrides:
            self._loaded = (overrides, load_prompts(overrides))
        return self._loaded[1]


async def start_chat_service(
    kb: KnowledgeBase, settings: Callable[[], Settings]
) -> Callable[[], Awaitable[None]]:
    """Serve the chat API as `[chat_api]` says; returns what stops it."""
    config = settings().chat_api
    # Per process: several processes serving the API each count their own minute.
    limits = LocalRateLimits()
    assistants = Assistants(kb, settings, CurrentPrompts(settings), limits)
    api = ChatApi(assistants, settings, TokenBook(config.tokens_file), limits)
    # Before it listens: lingua holds the whole process while its models load (~2 s).
    await api.languages.load()
    try:
        runner = await start_chat_api(api, config.host, config.port)
    except OSError:
        await assistants.close()
        raise

    async def stop() -> None:
        await runner.cleanup()
        await assistants.close()

    return stop


def new_token_main(argv: list[str]) -> int:
    """`knowledge-api new-token --name N [--reader @user:server]`: prints a token and the
    lines to add to the tokens file (only the token's hash is kept there)."""
    parser = argparse.ArgumentParser(
        prog="knowledge-api new-token", description="Make a token for the chat API."
    )
    parser.add_argument("--name", required=True, help="who or what it is for (logs, limits)")
    parser.add_argument("--reader", default="", help="the Matrix user whose rights apply")
    args = parser.parse_args(argv)
    try:
        token, lines = build_token_entry(args.name, args.reader)
    except ValueError as exc:
        print(f"knowledge-api new-token: {exc}", file=sys.stderr)
        return 2
    print(f"Token (give it to the caller; it is not kept anywhere):\n  {token}\n")
    print(f"Add to the tokens file ([chat_api] tokens_file):\n\n{lines}")
    return 0
