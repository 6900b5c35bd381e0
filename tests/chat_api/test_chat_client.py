"""A chat client nobody here wrote, used as a person would: `llm` (Simon Willison's
command-line client, from PyPI, in .venv-chat-client: deploy/setup-chat-client.sh),
pointed at `knowledge-api`'s chat API with the `extra-openai-models.yaml` its
documentation describes, asks, gets a cited answer, and goes on with `llm -c`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.dev.synapse import free_port
from core.chat_api.tokens import build_token_entry
from tests.e2e.scripted import reading_model
from tests.e2e.test_scale_out import wait_for_log

ROOT = Path(__file__).resolve().parents[2]
LLM_CLI = ROOT / ".venv-chat-client" / "bin" / "llm"
KNOWLEDGE_API = Path(sys.executable).parent / "knowledge-api"
CONFIG = """
[matrix]
homeserver = "http://127.0.0.1:1"
user_id = "@bot:example.org"
# knowledge-api never logs in: the variable need not be set.
password_env = "MATRIX_PASSWORD"

[bot]
data_dir = "{data}"

[llm]
url = "{llm}"
model = "test-model"
max_retries = 0
reasoning_opens_in_prompt = false

[ingest_api]
enabled = true
port = {ingest_port}

[chat_api]
enabled = true
port = {chat_port}
tokens_file = "tokens.toml"

[assistants.handbook]
collections = ["handbook"]
description = "The staff handbook"

[sources.wiki]
token = "wiki-token"

[collections.handbook]
source = "wiki"
public = true
"""


@pytest.fixture
async def knowledge_api(tmp_path: Path, llm) -> AsyncIterator[tuple[int, int, str]]:
    """`knowledge-api` serving both APIs, as an admin starts it: (ingest port, chat
    port, a visitor's token)."""
    assert LLM_CLI.exists(), "run deploy/setup-chat-client.sh (tests/run.sh does)"
    llm.respond = reading_model
    ports = free_port(), free_port()
    token, lines = build_token_entry("visitor", "")
    (tmp_path / "tokens.toml").write_text(lines)
    config = tmp_path / "config.toml"
    config.write_text(
        CONFIG.format(data=tmp_path / "data", llm=llm.url, ingest_port=ports[0], chat_port=ports[1])
    )
    log = tmp_path / "knowledge-api.log"
    process = subprocess.Popen(
        [str(KNOWLEDGE_API), "--config", str(config)],
        cwd=tmp_path,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    await wait_for_log(log, r"chat API listening", process)
    yield ports[0], ports[1], token
    process.terminate()
    await asyncio.to_thread(process.wait, 30)


async def put_document(port: int) -> None:
    url = f"http://127.0.0.1:{port}/api/v1/collections/handbook/documents/travel?wait=true"
    body = {
        "title": "Travel basics",
        "url": "https://handbook.example.org/travel",
        "content": "# Travel\n\nTravel is booked through the travel desk on floor 2.",
    }
    headers = {"Authorization": "Bearer wiki-token"}
    async with aiohttp.ClientSession() as http, http.put(url, json=body, headers=headers) as r:
        assert r.status == 200, await r.text()


async def run_llm(home: Path, *args: str) -> str:
    """The client's output, run while this test's loop serves the scripted model."""
    process = await asyncio.create_subprocess_exec(
        str(LLM_CLI),
        *args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "LLM_USER_PATH": str(home)},
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_llm_command_line_client_gets_a_cited_answer_and_follows_up(
    knowledge_api, tmp_path: Path, llm
):
    ingest_port, chat_port, token = knowledge_api
    await put_document(ingest_port)
    home = tmp_path / "llm-home"
    home.mkdir()
    # As llm's documentation says to add an OpenAI-compatible model.
    (home / "extra-openai-models.yaml").write_text(
        f"- model_id: handbook\n  model_name: handbook\n"
        f"  api_base: http://127.0.0.1:{chat_port}/v1\n  api_key_name: knowledge\n"
    )
    (home / "keys.json").write_text(json.dumps({"knowledge": token}))

    answer = await run_llm(home, "-m", "handbook", "How is travel booked?")
    assert "travel desk on floor 2. [1]" in answer
    assert "1. [Travel basics](https://handbook.example.org/travel)" in answer
    assert any(call.get("stream") for call in llm.history)  # llm streams by default, and so did we

    first = len(llm.history)
    await run_llm(home, "-c", "And on which floor is that desk?")
    # `-c` sends the conversation so far; the pre-step reads it as the conversation.
    prompts = [call["messages"][-1]["content"] for call in llm.history[first:]]
    assert any("travel desk on floor 2" in p.split("<conversation>")[-1] for p in prompts)
