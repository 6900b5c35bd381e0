"""`python -m bot.dev.local`: a local Synapse, a bot account, a demo user and room, and the bot.

Everything lives in `.local/` in the project folder; a second run reuses it (same port,
accounts, passwords and room). Ctrl-C stops the bot and the homeserver.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
from pathlib import Path

from nio import AsyncClient, LoginResponse, RoomCreateResponse

from bot.app import BotApp, run_until_signalled
from bot.dev.synapse import Homeserver, ensure_synapse_venv, free_port, start_homeserver
from bot.logs import setup_logging
from core.config import load_config
from core.knowledge.base import KnowledgeBase
from core.knowledge.documents import Document
from core.knowledge.files import read_documents

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "deploy" / "sample-documents"
LOCAL = ROOT / ".local"
PREFERRED_PORT = 8008


def _load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _choose_port(saved: int | None, fallback: int = PREFERRED_PORT) -> int:
    for port in (saved, fallback):
        if port and _port_is_free(port):
            return port
    return free_port()


def _write_config(path: Path, homeserver: str, state: dict) -> None:
    path.write_text(
        f"""# Written by `python -m bot.dev.local` for the local demo; edit it while the bot runs.
# Every key is explained in config.example.toml.
[matrix]
homeserver = "{homeserver}"
user_id = "{state["bot_user"]}"
password_env = "BOT_PASSWORD"
display_name = "Knowledge Bot"

[bot]
data_dir = "data"

[invites]
allowed_users = ["{state["demo_user"]}"]

[ingest_api]
enabled = true
port = {state["api_port"]}

[sources.samples]
token_env = "SAMPLES_TOKEN"

[collections.handbook]
source = "samples"
public = true
description = "The sample staff handbook (deploy/sample-documents)."
"""
    )


async def _ingest_samples(config: Path, env: dict[str, str]) -> None:
    """Put the sample documents into the demo collection (unchanged ones cost nothing)."""
    settings = load_config(config, env)
    kb = await KnowledgeBase.open(lambda: settings)
    try:
        documents = [d for d in read_documents([SAMPLES], "handbook") if isinstance(d, Document)]
        outcomes = await kb.indexer.put_many(documents)
        added = sum(o.status == "indexed" for o in outcomes)
        print(f"Sample documents: {added} indexed, {len(outcomes) - added} unchanged.")
    finally:
        await kb.close()


def _update_line(path: Path, key: str, value: str) -> None:
    """Set `key = value` where the generated config has it (ports may change between runs)."""
    lines = path.read_text().splitlines()
    lines = [f"{key} = {value}" if line.startswith(f"{key} =") else line for line in lines]
    path.write_text("\n".join(lines) + "\n")


async def _ensure_demo_room(state: dict, server: Homeserver, bot_user: str) -> str:
    if state.get("room_id"):
        return state["room_id"]
    client = AsyncClient(server.url, state["demo_user"])
    try:
        login = await client.login(state["demo_password"], device_name="local-setup")
        assert isinstance(login, LoginResponse), login
        room = await client.room_create(name="Knowledge bot demo", invite=[bot_user])
        assert isinstance(room, RoomCreateResponse), room
        await client.logout()
        return room.room_id
    finally:
        await client.close()


async def run() -> None:
    LOCAL.mkdir(exist_ok=True)
    state_file = LOCAL / "state.json"
    state = _load(state_file)
    python = ensure_synapse_venv(ROOT / ".venv-synapse")
    port = _choose_port(state.get("port"))
    server = start_homeserver(LOCAL / "synapse", python, port)
    try:
        state.setdefault("bot_password", secrets.token_urlsafe(16))
        state.setdefault("demo_password", secrets.token_urlsafe(12))
        state.setdefault("samples_token", secrets.token_urlsafe(16))
        state["api_port"] = _choose_port(state.get("api_port"), fallback=free_port())
        state["bot_user"] = server.register("knowledge-bot", state["bot_password"])
        state["demo_user"] = server.register("demo", state["demo_password"])
        state["port"] = port
        state["room_id"] = await _ensure_demo_room(state, server, state["bot_user"])
        state_file.write_text(json.dumps(state, indent=2))

        config = LOCAL / "bot" / "config.toml"
        config.parent.mkdir(exist_ok=True)
        if not config.exists():
            _write_config(config, server.url, state)
        _update_line(config, "homeserver", f'"{server.url}"')
        _update_line(config, "port", str(state["api_port"]))
        env = {
            **os.environ,
            "BOT_PASSWORD": state["bot_password"],
            "SAMPLES_TOKEN": state["samples_token"],
        }
        await _ingest_samples(config, env)

        print(
            f"""
The local homeserver and the bot are running. Connect with any Matrix client
(for example Element, with a custom homeserver):

    homeserver  {server.url}
    user        {state["demo_user"]}
    password    {state["demo_password"]}

Open the room "Knowledge bot demo" and mention the bot (Knowledge Bot), or send !help.
Ask, for example: "Knowledge Bot: what does error WG-503 mean?"
Bot config (edit it live): {config}
Ingestion API: http://127.0.0.1:{state["api_port"]}/api/v1 (Bearer {state["samples_token"]})
Press Ctrl-C to stop.
""",
            flush=True,
        )
        await run_until_signalled(BotApp(config, env, handle_signals=True))
    finally:
        server.stop()


def main() -> None:
    setup_logging("INFO")
    asyncio.run(run())


if __name__ == "__main__":
    main()
