"""`python -m bot.dev.local`: a local Synapse, a bot account, a demo user and room, and the bot.

Everything lives in `.local/` in the project folder (or $LOCAL_DEMO_DIR); a second run
reuses it (same port, accounts, passwords and rooms), and a run while one is going says
so and stops. Ctrl-C stops the bot and the homeserver.

A language model is connected from the environment at each start: LLM_URL (an
OpenAI-compatible endpoint), LLM_MODEL and, when it needs one, LLM_API_KEY. Without
LLM_URL the bot answers in search-only mode (the `[llm]` an earlier run wrote is removed).

A second user (`colleague`) is in the demo room, so that a catch-up has someone else's
messages to show; the demo user is a feedback admin.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import secrets
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from aiohttp import web

from bot.dev.synapse import Homeserver, ensure_synapse_venv, free_port, start_homeserver
from bot.logs import setup_logging
from bot.matrix.provision import ensure_member_as, ensure_rooms_as
from bot.runtime.app import BotApp, run_until_signalled
from core.config import load_config
from core.knowledge.documents import Document
from core.knowledge.ingest.realign import realign_models
from core.knowledge.parse.files import read_documents
from core.knowledge_base.base import KnowledgeBase

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "deploy" / "sample-documents"
LOCAL = Path(os.environ.get("LOCAL_DEMO_DIR") or ROOT / ".local")
PREFERRED_PORT = 8008
DEMO_ALIAS = "knowledge-bot-demo"
# What the sample documents are served as (a browser shows them rather than download).
CONTENT_TYPES = {
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".jsonl": "text/plain",
    ".html": "text/html",
}
# The keys of the `[llm]` the demo writes from the environment.
DEMO_LLM_KEYS = frozenset({"url", "model", "api_key_env"})


class AlreadyRunning(Exception):
    """Another run of the demo holds the lock; the text says where it runs."""


@contextlib.contextmanager
def demo_lock(folder: Path) -> Iterator[IO[str]]:
    """One demo per folder: a second one would start a second homeserver on the same
    database. The lock is the kernel's (flock), so a demo that crashed holds none."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            raise AlreadyRunning(lock.read().strip() or "(starting)") from None
        lock.truncate(0)
        yield lock


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
# The demo user's room with the bot where config errors and reloads are reported.
admin_room = "{state["admin_room_id"]}"

[invites]
allowed_users = ["{state["demo_user"]}", "{state["colleague_user"]}"]
{_feedback_section(state)}{_llm_section(os.environ)}
[ingest_api]
enabled = true
port = {state["api_port"]}

[sources.samples]
token_env = "SAMPLES_TOKEN"

[collections.handbook]
source = "samples"
public = true
description = "The sample staff handbook (deploy/sample-documents)."
# Bundled and offline: a question in German, Russian or Chinese finds these English pages.
embedding_model = "multilingual-e5-small"
"""
    )


def _llm_section(env: dict[str, str] | os._Environ[str]) -> str:
    url = env.get("LLM_URL", "")
    if not url:
        return ""
    key = 'api_key_env = "LLM_API_KEY"\n' if env.get("LLM_API_KEY") else ""
    return f'\n[llm]\nurl = "{url}"\nmodel = "{env.get("LLM_MODEL", "default")}"\n{key}'


def _feedback_section(state: dict) -> str:
    """The demo user may run `!feedback` in the admin room."""
    return f'\n[feedback]\nadmins = ["{state["demo_user"]}"]\n'


def _ensure_feedback_admins(path: Path, state: dict) -> None:
    """A config of an earlier demo without `[feedback]` gets the demo user as its admin."""
    text = path.read_text()
    if "\n[feedback]\n" not in text:
        path.write_text(text + _feedback_section(state))


def drop_demo_llm(text: str) -> str:
    """The config without the `[llm]` that the demo wrote from the environment (only
    url, model and api_key_env); an `[llm]` with other keys was written by hand, and stays."""
    lines = text.splitlines()
    if "[llm]" not in lines:
        return text
    start = lines.index("[llm]")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    keys = {line.split("=")[0].strip() for line in lines[start + 1 : end] if "=" in line}
    if not keys <= DEMO_LLM_KEYS or any(
        line.strip() and not line.startswith("#") and "=" not in line
        for line in lines[start + 1 : end]
    ):
        return text
    while start > 0 and not lines[start - 1].strip():
        start -= 1
    return "\n".join([*lines[:start], "", *lines[end:]]).rstrip("\n") + "\n"


def _apply_llm_env(path: Path, env: dict[str, str]) -> None:
    """The environment decides the model at each start: LLM_URL and LLM_MODEL win over an
    earlier run's [llm], and without LLM_URL the [llm] the demo wrote goes (search-only)."""
    text = path.read_text()
    if not env.get("LLM_URL"):
        path.write_text(drop_demo_llm(text))
        return
    if "\n[llm]\n" not in text:
        path.write_text(text + _llm_section(env))
        return
    _update_line(path, "url", f'"{env["LLM_URL"]}"')
    _update_line(path, "model", f'"{env.get("LLM_MODEL", "default")}"')


async def _ingest_samples(config: Path, env: dict[str, str], base_url: str) -> None:
    """Put the sample documents into the demo collection (unchanged ones cost nothing);
    files without a URL of their own link to `base_url`, where the demo serves them."""
    settings = load_config(config, env)
    kb = await KnowledgeBase.open(lambda: settings)
    try:
        read = read_documents([SAMPLES], "handbook", root=SAMPLES, base_url=base_url)
        documents = [d for d in read if isinstance(d, Document)]
        # A demo whose config names another model now is embedded again first.
        await realign_models(kb.catalog, kb.vectors, kb.embedders, lambda: settings)
        outcomes = await kb.indexer.put_many(documents)
        added = sum(o.status == "indexed" for o in outcomes)
        print(f"Sample documents: {added} indexed, {len(outcomes) - added} unchanged.")
    finally:
        await kb.close()


async def _serve_samples(port: int) -> web.AppRunner:
    """Serve the sample documents so that the demo's citations of files can be clicked."""
    app = web.Application()
    app.router.add_static("/", SAMPLES, show_index=True)
    app.on_response_prepare.append(_text_content_type)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


def decide_content_type(name: str) -> str | None:
    """The Content-Type a sample document is served with; None: as aiohttp guesses."""
    found = CONTENT_TYPES.get(Path(name).suffix.lower())
    return f"{found}; charset=utf-8" if found else None


async def _text_content_type(request: web.Request, response: web.StreamResponse) -> None:
    content_type = decide_content_type(request.path)
    if content_type and response.status == 200:
        response.headers["Content-Type"] = content_type


def _update_line(path: Path, key: str, value: str) -> None:
    """Set `key = value` where the generated config has it (ports may change between runs)."""
    lines = path.read_text().splitlines()
    lines = [f"{key} = {value}" if line.startswith(f"{key} =") else line for line in lines]
    path.write_text("\n".join(lines) + "\n")


async def _ensure_rooms(state: dict, server: Homeserver, bot_user: str) -> None:
    """The demo room (with a stable alias, for clients that cannot address a room id of
    version 12) and an admin room where config errors show, both with the bot."""
    wanted = [
        ("room_id", "Knowledge bot demo", DEMO_ALIAS),
        ("admin_room_id", "Knowledge bot admin", None),
    ]
    have = {key: state[key] for key, _, _ in wanted if state.get(key)}
    rooms = await ensure_rooms_as(
        server.url, state["demo_user"], state["demo_password"], wanted, have, [bot_user]
    )
    state.update(rooms)


def _describe_llm(url: str | None, model: str) -> str:
    """What the config's [llm] makes of the answers, for the banner."""
    if not url:
        return "none (search-only answers; start with LLM_URL and LLM_MODEL for a model)"
    return f"{url}, model {model} (start without LLM_URL for search-only answers)"


def server_name(state: dict) -> str:
    return str(state["demo_user"]).split(":", 1)[1]


async def run(lock: IO[str]) -> None:
    state_file = LOCAL / "state.json"
    state = _load(state_file)
    python = ensure_synapse_venv(ROOT / ".venv-synapse")
    port = _choose_port(state.get("port"))
    lock.write(f"homeserver http://127.0.0.1:{port}, process {os.getpid()}")
    lock.flush()
    server = start_homeserver(LOCAL / "synapse", python, port)
    try:
        state.setdefault("bot_password", secrets.token_urlsafe(16))
        state.setdefault("demo_password", secrets.token_urlsafe(12))
        state.setdefault("samples_token", secrets.token_urlsafe(16))
        state["api_port"] = _choose_port(state.get("api_port"), fallback=free_port())
        state["docs_port"] = _choose_port(state.get("docs_port"), fallback=free_port())
        state["bot_user"] = server.register("knowledge-bot", state["bot_password"])
        state["demo_user"] = server.register("demo", state["demo_password"])
        state.setdefault("colleague_password", secrets.token_urlsafe(12))
        state["colleague_user"] = server.register("colleague", state["colleague_password"])
        state["port"] = port
        await _ensure_rooms(state, server, state["bot_user"])
        await ensure_member_as(
            server.url, (state["demo_user"], state["demo_password"]),
            (state["colleague_user"], state["colleague_password"]), state["room_id"],
        )  # fmt: skip
        state_file.write_text(json.dumps(state, indent=2))

        config = LOCAL / "bot" / "config.toml"
        config.parent.mkdir(exist_ok=True)
        if not config.exists():
            _write_config(config, server.url, state)
        _update_line(config, "homeserver", f'"{server.url}"')
        _update_line(config, "port", str(state["api_port"]))
        _apply_llm_env(config, dict(os.environ))
        _ensure_feedback_admins(config, state)
        env = {
            **os.environ,
            "BOT_PASSWORD": state["bot_password"],
            "SAMPLES_TOKEN": state["samples_token"],
        }
        samples = await _serve_samples(state["docs_port"])
        docs_url = f"http://127.0.0.1:{state['docs_port']}/"
        await _ingest_samples(config, env, docs_url)
        llm = load_config(config, env).llm

        print(
            f"""
The local homeserver and the bot are running. Connect with any Matrix client
(for example Element, with a custom homeserver):

    homeserver  {server.url}
    user        {state["demo_user"]}
    password    {state["demo_password"]}

A second user, in the demo room too (log in as them in another client or a private
window, and what they say shows in the demo user's !catchup):

    user        {state["colleague_user"]}
    password    {state["colleague_password"]}

Open the room "Knowledge bot demo" ({state["room_id"]}, alias
#{DEMO_ALIAS}:{server_name(state)}) and mention the bot (Knowledge Bot), or send !help.
Config errors show in the room "Knowledge bot admin", where the demo user may send !feedback.
Language model: {_describe_llm(llm.url, llm.model)}
Ask, for example: "Knowledge Bot: what does error WG-503 mean?", or in any language:
"Knowledge Bot: Wie viele Tage Jahresurlaub bekommen Vollzeitbeschäftigte?"
Bot config (edit it live): {config}
Ingestion API: http://127.0.0.1:{state["api_port"]}/api/v1 (Bearer {state["samples_token"]})
Sample documents (what citations link to): {docs_url}
Press Ctrl-C to stop.
""",
            flush=True,
        )
        try:
            await run_until_signalled(BotApp(config, env, handle_signals=True))
        finally:
            await samples.cleanup()
    finally:
        server.stop()


def main() -> None:
    setup_logging("INFO")
    try:
        with demo_lock(LOCAL) as lock:
            asyncio.run(run(lock))
    except AlreadyRunning as exc:
        print(f"The local demo is already running from {LOCAL}: {exc}. "
              "Stop it with Ctrl-C in its terminal first.", file=sys.stderr)  # fmt: skip
        sys.exit(1)


if __name__ == "__main__":
    main()
