"""A source application that really verifies the bot's tokens, and a bot-side knowledge base."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from core.config import parse_config
from core.knowledge_base.api import IngestApi
from core.knowledge_base.base import KnowledgeBase
from core.rights.verify import TokenRejected, verify_reader_token

RIGHTS_CONFIG = """
[matrix]
homeserver = "http://127.0.0.1:1"
user_id = "@bot:example.org"
password = "unused"

[bot]
data_dir = "{data_dir}"

# The question of these tests names every document's topic at once: every passage the
# readers may see is shown, so that what is left out is left out by the rights check.
[retrieval]
passage_near_distance = 2.0
passage_max_distance = 2.0
passage_relative_distance = 2.0

[rights]
issuer = "knowledge-bot"
cache_seconds = {cache_seconds}
check_timeout_seconds = 1.0
readers_per_request = 2
max_room_members = 5

{keys}

[sources.wiki]
token = "wiki-token"
rights_url = "{wiki_url}"
[sources.wiki.readers]
rule = "localpart"
homeserver = "example.org"
users = {{ "@boss:example.org" = "jane.doe" }}

[sources.tracker]
token = "tracker-token"
rights_url = "{tracker_url}"
[sources.tracker.readers]
rule = "matrix_id"

[collections.handbook]
source = "wiki"
public = true

[collections.wiki]
source = "wiki"

[collections.tickets]
source = "tracker"
"""


def write_key(path: Path, algorithm: str = "EdDSA") -> Path:
    key = (
        ed25519.Ed25519PrivateKey.generate()
        if algorithm == "EdDSA"
        else rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def keys_toml(*keys: tuple[str, str, Path]) -> str:
    return "\n".join(
        f'[[rights.signing_keys]]\nkid = "{kid}"\nalgorithm = "{alg}"\nprivate_key_file = "{path}"\n'
        for kid, alg, path in keys
    )


@dataclass
class SourceApp:
    """A source application: verifies each token with the bot's published JWKS, then
    answers from its own access list. `mode` makes it fail on demand."""

    name: str
    jwks_url: str
    acl: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    mode: str = "ok"  # ok | slow | down | garbage
    requests: list[dict] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    delay: float = 0.0
    jwks: dict | None = None
    # Items added to every `allowed` list: a buggy application's answer, outside the protocol.
    malformed: list = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.mode == "down":
            return web.json_response({"error": "maintenance"}, status=503)
        if self.mode == "slow":  # as good as never: only the bot's timeout ends the wait
            await asyncio.sleep(120)
        if self.mode == "garbage":
            return web.Response(text="<html>login</html>")
        if self.jwks is None:  # fetched once, as a real application caches it
            async with aiohttp.ClientSession() as http, http.get(self.jwks_url) as response:
                self.jwks = await response.json()
        jwks = self.jwks
        results = []
        for token in body["tokens"]:
            try:
                claims = verify_reader_token(
                    token, jwks, audience=self.name, issuer="knowledge-bot"
                )
                readable = self.acl.get(claims["sub"], set())
            except TokenRejected as exc:
                self.rejected.append(str(exc))
                readable = set()
            allowed = [d for d in body["documents"] if (d["collection"], d["id"]) in readable]
            results.append({"allowed": allowed + self.malformed})
        return web.json_response({"results": results})


async def serve(app: SourceApp) -> TestServer:
    """Start the application on a loopback port; its rights URL is `server.make_url("/rights")`."""
    web_app = web.Application()
    web_app.router.add_post("/rights", app.handle)
    server = TestServer(web_app)
    await server.start_server()
    return server


@dataclass
class RightsWorld:
    kb: KnowledgeBase
    wiki: SourceApp
    tracker: SourceApp
    bot_api: str


@pytest.fixture
def cache_seconds() -> float:
    return 60


@pytest.fixture
async def world(tmp_path, embedders, cache_seconds, storage_toml):
    apps = {name: SourceApp(name, "") for name in ("wiki", "tracker")}
    servers = {name: await serve(app) for name, app in apps.items()}
    key = write_key(tmp_path / "bot.pem")
    settings = parse_config(
        RIGHTS_CONFIG.format(
            data_dir=tmp_path,
            cache_seconds=cache_seconds,
            keys=keys_toml(("bot-1", "EdDSA", key)),
            wiki_url=servers["wiki"].make_url("/rights"),
            tracker_url=servers["tracker"].make_url("/rights"),
        )
        + storage_toml,
        origin="rights.toml",
        env={},
        base_dir=tmp_path,
    )
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    api = TestServer(IngestApi(kb, lambda: settings).build_app())
    await api.start_server()
    for app in apps.values():
        app.jwks_url = str(api.make_url("/api/v1/jwks.json"))
    yield RightsWorld(kb, apps["wiki"], apps["tracker"], str(api.make_url("/api/v1")))
    await kb.close()
    await api.close()
    for server in servers.values():
        await server.close()
