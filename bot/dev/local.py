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

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ROOT / ".local"
PREFERRED_PORT = 8008


def _load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _choose_port(saved: int | None) -> int:
    for port in (saved, PREFERRED_PORT):
        if port and _port_is_free(port):
            return port
    return free_port()


def _write_config(path: Path, homeserver: str, bot_user: str, demo_user: str) -> None:
    path.write_text(
        f"""# Written by `python -m bot.dev.local` for the local demo; edit it while the bot runs.
# Every key is explained in config.example.toml.
[matrix]
homeserver = "{homeserver}"
user_id = "{bot_user}"
password_env = "BOT_PASSWORD"
display_name = "Knowledge Bot"

[bot]
data_dir = "data"

[invites]
allowed_users = ["{demo_user}"]
"""
    )


def _update_homeserver(path: Path, homeserver: str) -> None:
    lines = path.read_text().splitlines()
    lines = [
        f'homeserver = "{homeserver}"' if ln.startswith("homeserver =") else ln for ln in lines
    ]
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
        bot_user = server.register("knowledge-bot", state["bot_password"])
        state["demo_user"] = server.register("demo", state["demo_password"])
        state["port"] = port
        state["room_id"] = await _ensure_demo_room(state, server, bot_user)
        state_file.write_text(json.dumps(state, indent=2))

        config = LOCAL / "bot" / "config.toml"
        config.parent.mkdir(exist_ok=True)
        if not config.exists():
            _write_config(config, server.url, bot_user, state["demo_user"])
        _update_homeserver(config, server.url)

        print(
            f"""
The local homeserver and the bot are running. Connect with any Matrix client
(for example Element, with a custom homeserver):

    homeserver  {server.url}
    user        {state["demo_user"]}
    password    {state["demo_password"]}

Open the room "Knowledge bot demo" and mention the bot (Knowledge Bot), or send !help.
Bot config (edit it live): {config}
Press Ctrl-C to stop.
""",
            flush=True,
        )
        env = {**os.environ, "BOT_PASSWORD": state["bot_password"]}
        await run_until_signalled(BotApp(config, env, handle_signals=True))
    finally:
        server.stop()


def main() -> None:
    import logging

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("nio").setLevel(logging.WARNING)
    asyncio.run(run())


if __name__ == "__main__":
    main()
