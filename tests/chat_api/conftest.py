"""The chat API on a knowledge base whose source applications verify every reader
token (as in the rights tests), with the scripted reading model behind it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer
from openai import AsyncOpenAI

from core.chat_api.assistants import Assistants
from core.chat_api.server import ChatApi
from core.chat_api.service import CurrentPrompts
from core.chat_api.tokens import TokenBook, build_token_entry
from core.config import Settings, parse_config
from core.guardrails.rate_store import LocalRateLimits
from core.knowledge.documents import Document
from core.knowledge_base.api import IngestApi
from core.knowledge_base.base import KnowledgeBase
from tests.e2e.scripted import reading_model
from tests.rights.conftest import RIGHTS_CONFIG, SourceApp, keys_toml, serve, write_key

ALICE, BOB = "@alice:example.org", "@bob:example.org"
DOCUMENTS = [
    Document(
        "handbook",
        "travel",
        "Travel basics",
        "Travel is booked through the travel desk.",
        url="https://handbook/travel",
    ),
    Document(
        "wiki",
        "salaries",
        "Salary bands",
        "Travel managers are in salary band E4.",
        url="https://wiki/secret-salaries",
    ),
]
CHAT_CONFIG = """
[chat_api]
enabled = true
tokens_file = "{tokens}"
requests_per_minute = {per_minute}

[assistants.everything]
description = "Every collection"

[assistants.handbook]
collections = ["handbook"]
description = "The public handbook only"
"""


@dataclass
class ChatWorld:
    kb: KnowledgeBase
    settings: Settings
    wiki: SourceApp
    tokens: dict[str, str]  # the caller's name -> their token

    def client(self, name: str, url: str) -> AsyncOpenAI:
        return AsyncOpenAI(base_url=url, api_key=self.tokens[name], max_retries=0)


@pytest.fixture
def per_minute() -> int:
    return 50


@pytest.fixture
async def chat_world(
    tmp_path: Path, embedders, llm, storage_toml, per_minute
) -> AsyncIterator[ChatWorld]:
    apps = {name: SourceApp(name, "") for name in ("wiki", "tracker")}
    servers = {name: await serve(app) for name, app in apps.items()}
    tokens, lines = {}, []
    for name, reader in (("alice", ALICE), ("bob", BOB), ("visitor", "")):
        tokens[name], entry = build_token_entry(name, reader)
        lines.append(entry)
    (tmp_path / "tokens.toml").write_text("\n".join(lines))
    llm.respond = reading_model
    settings = parse_config(
        RIGHTS_CONFIG.format(
            data_dir=tmp_path,
            cache_seconds=60,
            keys=keys_toml(("bot-1", "EdDSA", write_key(tmp_path / "bot.pem"))),
            wiki_url=servers["wiki"].make_url("/rights"),
            tracker_url=servers["tracker"].make_url("/rights"),
        )
        + storage_toml
        + f'[llm]\nurl = "{llm.url}"\nmodel = "test-model"\nmax_retries = 0\n'
        "reasoning_opens_in_prompt = false\n"
        + CHAT_CONFIG.format(tokens=tmp_path / "tokens.toml", per_minute=per_minute),
        origin="chat.toml",
        env={},
        base_dir=tmp_path,
    )
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    jwks = TestServer(IngestApi(kb, lambda: settings).build_app())
    await jwks.start_server()
    for app in apps.values():
        app.jwks_url = str(jwks.make_url("/api/v1/jwks.json"))
    apps["wiki"].acl = {"alice": {("wiki", "salaries")}}
    await kb.indexer.put_many(DOCUMENTS)
    yield ChatWorld(kb, settings, apps["wiki"], tokens)
    await kb.close()
    await jwks.close()
    for server in servers.values():
        await server.close()


@pytest.fixture
async def chat_url(chat_world: ChatWorld) -> AsyncIterator[str]:
    """The chat API's base URL (`…/v1`), as `knowledge-api` serves it."""
    settings = lambda: chat_world.settings  # noqa: E731
    limits = LocalRateLimits()
    assistants = Assistants(chat_world.kb, settings, CurrentPrompts(settings), limits)
    api = ChatApi(assistants, settings, TokenBook(settings().chat_api.tokens_file), limits)
    server = TestServer(api.build_app())
    await server.start_server()
    yield str(server.make_url("/v1"))
    await server.close()
    await assistants.close()
