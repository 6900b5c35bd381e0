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

from bot.dev.demo_config import (
    CHAT_TOKENS_FILE,
    PICKLE_KEY_ENV,
    build_config,
    build_curl_line,
    decide_llm_is_admins,
    describe_llm,
    read_port,
    update_chat_tokens,
    update_config,
)
from bot.dev.synapse import Homeserver, ensure_synapse_venv, free_port, start_homeserver
from bot.logs import setup_logging
from bot.matrix.provision import ensure_member_as, ensure_rooms_as
from bot.runtime.app import BotApp, run_until_signalled
from core.config import Settings, load_config
from core.knowledge.documents import Document
from core.knowledge.ingest.realign import realign_models
from core.knowledge.parse.files import read_documents
from core.knowledge_base.base import KnowledgeBase

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "deploy" / "sample-documents"
LOCAL = Path(os.environ.get("LOCAL_DEMO_DIR") or ROOT / ".local")
PREFERRED_PORT = 8008
DEMO_ALIAS = "knowledge-bot-demo"
ADMIN_ALIAS = "knowledge-bot-admin"
# What the sample documents are served as (a browser shows them rather than download).
CONTENT_TYPES = {
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".jsonl": "text/plain",
    ".html": "text/html",
}


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
        # A JSON lines file holds several documents (the FAQ's entries): say both counts,
        # or "5 indexed" reads as a miscount of a folder of four files.
        files = sum(1 for path in SAMPLES.rglob("*") if path.is_file())
        print(
            f"Sample documents: {len(documents)} from {files} files in {SAMPLES.name}/"
            f" ({added} indexed, {len(outcomes) - added} unchanged)."
        )
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


async def _ensure_rooms(state: dict, server: Homeserver, bot_user: str) -> None:
    """The demo room (with a stable alias, for clients that cannot address a room id of
    version 12) and an admin room where config errors show, both with the bot."""
    wanted: list[tuple[str, str, str | None]] = [
        ("room_id", "Knowledge bot demo", DEMO_ALIAS),
        ("admin_room_id", "Knowledge bot admin", ADMIN_ALIAS),
    ]
    have = {key: state[key] for key, _, _ in wanted if state.get(key)}
    rooms = await ensure_rooms_as(
        server.url, state["demo_user"], state["demo_password"], wanted, have, [bot_user]
    )
    state.update(rooms)


def build_banner(
    homeserver: str, state: dict, config: Path, docs_url: str, settings: Settings
) -> str:
    """What the demo prints once it runs: how to connect, and every feature it has on."""
    name = server_name(state)
    llm = settings.llm
    admins_llm = decide_llm_is_admins(config.read_text())
    files = settings.room_files_collection()
    lines = [
        "",
        "The local homeserver and the bot are running. Connect with any Matrix client",
        "(for example Element, with a custom homeserver):",
        "",
        f"    homeserver  {homeserver}",
        f"    user        {state['demo_user']}",
        f"    password    {state['demo_password']}",
        "",
        "A second user, in the demo room too (log in as them in another client or a private",
        "window, and what they say shows in the demo user's !catchup):",
        "",
        f"    user        {state['colleague_user']}",
        f"    password    {state['colleague_password']}",
        "",
        f'Open the room "Knowledge bot demo" (#{DEMO_ALIAS}:{name}, {state["room_id"]})',
        "and mention the bot (Knowledge Bot), or send !help. Ask, for example:",
        '  "Knowledge Bot: what does error WG-503 mean?", or in any language:',
        '  "Knowledge Bot: Wie viele Tage Jahresurlaub bekommen Vollzeitbeschäftigte?"',
    ]
    if files:
        lines += [
            f"Files shared in the demo room are kept as its knowledge (collection {files}):",
            'reply to one mentioning the bot with a question, or with "summarize this".',
        ]
    if settings.speech.enabled:
        how = (
            "by the bot itself (Whisper tiny.en, English)"
            if settings.speech.local
            else (f"by {settings.speech.url}")
        )
        lines += [
            f"Voice messages are transcribed {how}: send one in a direct chat with the bot",
            "(or as a reply to it) and it is answered as a question.",
        ]
    lines += [
        f'Config errors show in the room "Knowledge bot admin" (#{ADMIN_ALIAS}:{name}),',
        "where the demo user may send !feedback.",
        f"Language model: {describe_llm(llm.url, llm.model, admins_llm)}",
        f"Bot config (edit it live): {config}",
        f"Ingestion API: http://127.0.0.1:{state['api_port']}/api/v1/collections "
        f"(Bearer {state['samples_token']}; its OpenAPI document: /api/v1/openapi.json)",
    ]
    if settings.chat_api.enabled:
        lines += [
            'Chat API for chat clients (OpenAI-compatible, model "handbook", the demo user\'s',
            "token); try it:",
            f"    {build_curl_line(settings.chat_api.port, state['chat_token'])}",
        ]
    if settings.mcp.enabled:
        lines += [
            "MCP server for assistants (Cursor, Claude Desktop; the same token): "
            f"http://127.0.0.1:{settings.mcp.port}{settings.mcp.path}",
            "    (how to connect them: docs/integrations/mcp.md)",
        ]
    if settings.ops.enabled:
        lines.append(f"Health and metrics: http://127.0.0.1:{settings.ops.port}/health")
    lines += [f"Sample documents (what citations link to): {docs_url}", "Press Ctrl-C to stop."]
    return "\n".join(lines) + "\n"


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
    if not server.url.endswith(f":{port}"):  # taken meanwhile: Synapse runs on another
        lock.truncate(0)
        lock.write(f"homeserver {server.url}, process {os.getpid()}")
        lock.flush()
    try:
        state.setdefault("bot_password", secrets.token_urlsafe(16))
        state.setdefault("demo_password", secrets.token_urlsafe(12))
        state.setdefault("samples_token", secrets.token_urlsafe(16))
        state.setdefault("pickle_key", secrets.token_urlsafe(32))
        config = LOCAL / "bot" / "config.toml"
        written = config.read_text() if config.exists() else ""
        # A port the admin chose in the config is kept while it is free.
        for key, section in (
            ("api_port", "ingest_api"),
            ("chat_port", "chat_api"),
            ("mcp_port", "mcp"),
            ("ops_port", "ops"),
        ):
            wanted = read_port(written, section) or state.get(key)
            state[key] = _choose_port(wanted, fallback=free_port())
        state["docs_port"] = _choose_port(state.get("docs_port"), fallback=free_port())
        state.setdefault("chat_token", "kb-" + secrets.token_urlsafe(32))
        state["bot_user"] = server.register("knowledge-bot", state["bot_password"])
        state["demo_user"] = server.register("demo", state["demo_password"])
        state.setdefault("colleague_password", secrets.token_urlsafe(12))
        state["colleague_user"] = server.register("colleague", state["colleague_password"])
        state["port"] = int(server.url.rsplit(":", 1)[1])  # another, if it was taken
        await _ensure_rooms(state, server, state["bot_user"])
        await ensure_member_as(
            server.url,
            (state["demo_user"], state["demo_password"]),
            (state["colleague_user"], state["colleague_password"]),
            state["room_id"],
        )
        state_file.write_text(json.dumps(state, indent=2))

        config.parent.mkdir(exist_ok=True)
        environment = dict(os.environ)
        config.write_text(
            update_config(written, server.url, state, environment)
            if written
            else build_config(server.url, state, environment)
        )
        tokens = config.parent / CHAT_TOKENS_FILE
        have = tokens.read_text() if tokens.exists() else ""
        tokens.write_text(update_chat_tokens(have, state["chat_token"], state["demo_user"]))
        env = {
            **os.environ,
            "BOT_PASSWORD": state["bot_password"],
            "SAMPLES_TOKEN": state["samples_token"],
            PICKLE_KEY_ENV: state["pickle_key"],
        }
        samples = await _serve_samples(state["docs_port"])
        docs_url = f"http://127.0.0.1:{state['docs_port']}/"
        await _ingest_samples(config, env, docs_url)
        settings = load_config(config, env)

        print(build_banner(server.url, state, config, docs_url, settings), flush=True)
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
        print(
            f"The local demo is already running from {LOCAL}: {exc}. "
            "Stop it with Ctrl-C in its terminal first.",
            file=sys.stderr,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
