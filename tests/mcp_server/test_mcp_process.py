"""`knowledge-api` serving the MCP server, as an admin starts it, called by the SDK's own
client over real HTTP: each caller gets what their reader may read at the source
application (which verifies every reader token), and nothing of it reaches the log."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from bot.dev.synapse import free_port
from core.chat_api.tokens import build_token_entry
from tests.e2e.test_scale_out import wait_for_log
from tests.mcp_server.conftest import connect_to
from tests.mcp_server.test_mcp_tools import everything_of, text_of
from tests.rights.conftest import SourceApp, keys_toml, serve, write_key

KNOWLEDGE_API = Path(sys.executable).parent / "knowledge-api"
CONFIG = """
[matrix]
homeserver = "http://127.0.0.1:1"
user_id = "@bot:example.org"
password_env = "MATRIX_PASSWORD"

[bot]
data_dir = "{data}"

[ingest_api]
enabled = true
port = {ingest_port}

[mcp]
enabled = true
port = {mcp_port}
tokens_file = "tokens.toml"

[rights]
issuer = "knowledge-bot"
{keys}

[sources.wiki]
token = "wiki-token"
rights_url = "{rights_url}"
[sources.wiki.readers]
rule = "matrix_id"

[collections.handbook]
source = "wiki"
public = true
description = "The staff handbook"

[collections.wiki]
source = "wiki"
description = "The internal wiki"
"""
DOCUMENTS = {
    "handbook/travel": ("Travel basics", "Travel is booked through the travel desk."),
    "wiki/salaries": ("Salary bands", "Travel managers are in salary band E4."),
}


@dataclass
class McpProcess:
    url: str
    tokens: dict[str, str]
    wiki: SourceApp
    tokens_file: Path
    log: Path


async def put_documents(port: int) -> None:
    async with aiohttp.ClientSession() as http:
        for path, (title, content) in DOCUMENTS.items():
            collection, doc_id = path.split("/")
            url = f"http://127.0.0.1:{port}/api/v1/collections/{collection}/documents/{doc_id}"
            body = {"title": title, "content": content, "url": f"https://{collection}/{doc_id}"}
            async with http.put(
                f"{url}?wait=true", json=body, headers={"Authorization": "Bearer wiki-token"}
            ) as response:
                assert response.status == 200, await response.text()


@pytest.fixture
async def mcp_process(tmp_path: Path) -> AsyncIterator[McpProcess]:
    wiki = SourceApp("wiki", "")
    wiki.acl = {"@alice:example.org": {("wiki", "salaries")}}
    wiki_server = await serve(wiki)
    tokens, lines = {}, []
    for name, reader in (
        ("alice", "@alice:example.org"),
        ("bob", "@bob:example.org"),
        ("carol", "@carol:example.org"),
        ("visitor", ""),
    ):
        tokens[name], entry = build_token_entry(name, reader)
        lines.append(entry)
    tokens_file = tmp_path / "tokens.toml"
    tokens_file.write_text("\n".join(lines))
    ingest_port, mcp_port = free_port(), free_port()
    config = tmp_path / "config.toml"
    config.write_text(
        CONFIG.format(
            data=tmp_path / "data",
            ingest_port=ingest_port,
            mcp_port=mcp_port,
            keys=keys_toml(("bot-1", "EdDSA", write_key(tmp_path / "bot.pem"))),
            rights_url=wiki_server.make_url("/rights"),
        )
    )
    wiki.jwks_url = f"http://127.0.0.1:{ingest_port}/api/v1/jwks.json"
    log = tmp_path / "knowledge-api.log"
    process = subprocess.Popen(
        [str(KNOWLEDGE_API), "--config", str(config)],
        cwd=tmp_path,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    try:
        await wait_for_log(log, r"MCP server listening", process)
        await wait_for_log(log, r"ingestion API on http", process)
        await put_documents(ingest_port)
        url = f"http://127.0.0.1:{mcp_port}/mcp"
        yield McpProcess(url, tokens, wiki, tokens_file, log)
    finally:
        process.terminate()
        await asyncio.to_thread(process.wait, 30)
        await wiki_server.close()


async def test_each_caller_gets_what_their_reader_may_read(mcp_process: McpProcess):
    question = {"query": "Which salary band are travel managers in?"}
    call = mcp_process.tokens
    async with connect_to(mcp_process.url, call["alice"]) as alice:
        tools = sorted(tool.name for tool in (await alice.list_tools()).tools)
        found = await alice.call_tool("search", question)
        document = await alice.call_tool("fetch", {"document_id": "wiki:salaries"})
    assert tools == ["fetch", "list_collections", "search"]
    assert "salary band E4" in text_of(found) and "https://wiki/salaries" in text_of(found)
    assert document.structured_content["text"] == "Travel managers are in salary band E4."
    checks_for_alice = len(mcp_process.wiki.requests)

    async with connect_to(mcp_process.url, call["bob"]) as bob:
        found = await bob.call_tool("search", question)
        document = await bob.call_tool("fetch", {"document_id": "wiki:salaries"})
    assert "E4" not in everything_of(found) + everything_of(document)
    assert "Salary bands" not in everything_of(found) + everything_of(document)

    async with connect_to(mcp_process.url, call["visitor"]) as visitor:
        found = await visitor.call_tool("search", {"query": "How is travel booked?"})
        listed = await visitor.call_tool("list_collections", {})
    assert [p["document_id"] for p in found.structured_content["passages"]] == ["travel"]
    assert [c["name"] for c in listed.structured_content["collections"]] == ["handbook"]

    # The application's log: one check per reader and document, each token verified.
    asked = mcp_process.wiki.requests
    assert checks_for_alice == 1 and len(asked) == 2 and not mcp_process.wiki.rejected
    salaries = [{"collection": "wiki", "id": "salaries"}]
    assert [body["documents"] for body in asked] == [salaries, salaries]

    # The application down, for a reader it was never asked about: nothing of the
    # restricted document, and the caller is told.
    mcp_process.wiki.acl["@carol:example.org"] = {("wiki", "salaries")}
    mcp_process.wiki.mode = "down"
    async with connect_to(mcp_process.url, call["carol"]) as carol:
        found = await carol.call_tool("search", question)
    assert "E4" not in everything_of(found)
    assert "could not be checked" in found.structured_content["notice"]

    # Neither document text nor a token in the log.
    logged = mcp_process.log.read_text()
    assert "MCP search by alice" in logged
    assert "E4" not in logged and "travel desk" not in logged
    assert not any(token in logged for token in call.values())
