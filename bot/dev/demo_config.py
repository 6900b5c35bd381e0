"""The local demo's config: written once, then brought up to date at each start, section
by section, keeping what the admin edited (tomlkit keeps comments, order and keys it is
not asked to change).

Each service is configured through its own section, never by a line pattern: the demo
once rewrote every `port =` line to the ingestion API's port, so a `[chat_api]` added by
hand got that port too and never started.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
from collections.abc import Mapping
from typing import Any

import tomlkit
from tomlkit.items import Table

from core.chat_api.tokens import digest_of

# The keys of the `[llm]` the demo writes from the environment; one with others is the
# admin's and stays.
DEMO_LLM_KEYS = frozenset({"url", "model", "api_key_env"})
# The chat API's model (an assistant over the sample documents) and the demo's question.
ASSISTANT = "handbook"
CHAT_TOKEN_NAME = "demo"
CHAT_TOKENS_FILE = "chat-tokens.toml"
FILES_COLLECTION = "room-files"
EXAMPLE_QUESTION = "What does error WG-503 mean?"
# Voice messages transcribed by the bot itself, with the model the voice extra bundles
# (Whisper tiny.en): no transcription endpoint to run.
SPEECH = {"local": True}
# The variable the demo gives the bot's store passphrase in.
PICKLE_KEY_ENV = "BOT_PICKLE_KEY"


def build_config(homeserver: str, state: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """The config of a new demo (every key is explained in config.example.toml)."""
    text = f"""# Written by `python -m bot.dev.local` for the local demo; edit it while it runs.
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

[sources.samples]
token_env = "SAMPLES_TOKEN"

[collections.handbook]
source = "samples"
public = true
description = "The sample staff handbook (deploy/sample-documents)."
# Bundled and offline: a question in German, Russian or Chinese finds these English pages.
embedding_model = "multilingual-e5-small"
"""
    return update_config(text, homeserver, state, env)


def update_config(
    text: str, homeserver: str, state: Mapping[str, Any], env: Mapping[str, str]
) -> str:
    """The config brought up to this start: the homeserver's address and the ports
    chosen, the model from the environment, and the sections a demo of an earlier
    release lacks (files, the chat API, the MCP server, feedback admins). Sections the
    admin wrote stay."""
    doc = tomlkit.parse(text)
    matrix = _table(doc, "matrix")
    matrix["homeserver"] = homeserver
    # The passphrase of the bot's encryption keys, from the demo's state file like its
    # password: without one the bot generates it with a warning meant for production.
    # A demo of an earlier release, locked with the generated key, is re-locked with it.
    if "pickle_key" not in matrix and "pickle_key_env" not in matrix:
        matrix["pickle_key_env"] = PICKLE_KEY_ENV
    if "feedback" not in doc:
        doc["feedback"] = _new_table(
            {"admins": [state["demo_user"]]}, "The demo user may run !feedback in the admin room."
        )
    ingest = _table(doc, "ingest_api")
    ingest.setdefault("enabled", True)
    ingest["port"] = state["api_port"]
    # Its own port too: two demos (in two folders) must not share the default 9100.
    _table(doc, "ops")["port"] = state["ops_port"]
    _add_chat_api(doc, state)
    _add_mcp(doc, state)
    _add_room_files(doc)
    _add_speech(doc)
    _apply_llm(doc, env)
    return tomlkit.dumps(doc)


def read_port(text: str, section: str) -> int | None:
    """The port a section of an existing config names (the admin may have chosen it)."""
    try:
        found = tomlkit.parse(text).get(section, {}).get("port")
    except tomlkit.exceptions.TOMLKitError:
        return None
    return int(found) if isinstance(found, int) else None


def _add_chat_api(doc: tomlkit.TOMLDocument, state: Mapping[str, Any]) -> None:
    if "chat_api" in doc:
        _table(doc, "chat_api")["port"] = state["chat_port"]
        return
    doc["chat_api"] = _new_table(
        {"enabled": True, "port": state["chat_port"], "tokens_file": CHAT_TOKENS_FILE},
        "The knowledge for chat clients (OpenAI-compatible); the banner shows a call.",
    )
    assistants = _table(doc, "assistants")
    if ASSISTANT not in assistants:
        assistants[ASSISTANT] = _new_table(
            {"collections": [ASSISTANT], "description": "The sample staff handbook"}
        )


def _add_mcp(doc: tomlkit.TOMLDocument, state: Mapping[str, Any]) -> None:
    if "mcp" in doc:
        _table(doc, "mcp")["port"] = state["mcp_port"]
        return
    doc["mcp"] = _new_table(
        {"enabled": True, "port": state["mcp_port"]},
        "The knowledge as MCP tools for assistants (Cursor, Claude Desktop); the chat API's "
        "tokens.",
    )


def _add_room_files(doc: tomlkit.TOMLDocument) -> None:
    if "files" in doc:
        return
    collections = _table(doc, "collections")
    if FILES_COLLECTION not in collections:
        collections[FILES_COLLECTION] = _new_table(
            {
                "source": "samples",
                "description": "Files shared in the demo's rooms.",
                "embedding_model": "multilingual-e5-small",
            },
            "Files shared in rooms: each room's own knowledge, for its members only.",
        )
    doc["files"] = _new_table({"collection": FILES_COLLECTION})


def _add_speech(doc: tomlkit.TOMLDocument) -> None:
    """Voice transcribed locally, when the voice extra is installed (deploy/local.sh
    installs it) and the admin wrote no [speech] of their own."""
    if "speech" in doc or importlib.util.find_spec("faster_whisper") is None:
        return
    doc["speech"] = _new_table(
        SPEECH,
        "Voice messages transcribed by the bot (Whisper tiny.en, bundled, English only); "
        "an endpoint instead: url.",
    )


def _apply_llm(doc: tomlkit.TOMLDocument, env: Mapping[str, str]) -> None:
    """The environment decides the model at each start: LLM_URL and LLM_MODEL win over an
    earlier run's [llm], and without LLM_URL the [llm] the demo wrote goes (search-only);
    an [llm] with keys of the admin's own stays."""
    url = env.get("LLM_URL", "")
    if not url:
        if "llm" in doc and set(_table(doc, "llm")) <= DEMO_LLM_KEYS:
            del doc["llm"]
        return
    llm = _table(doc, "llm")
    llm["url"] = url
    llm["model"] = env.get("LLM_MODEL", "default")
    if env.get("LLM_API_KEY"):
        llm["api_key_env"] = "LLM_API_KEY"


def decide_llm_is_admins(text: str) -> bool:
    """Whether the config's [llm] has keys the demo does not write (the admin's own)."""
    llm = tomlkit.parse(text).get("llm", {})
    return bool(set(llm) - DEMO_LLM_KEYS)


def update_chat_tokens(text: str, token: str, reader: str) -> str:
    """The tokens file of the demo's chat API with the demo user's token (its hash only);
    the admin's other tokens stay."""
    doc = tomlkit.parse(text)
    if not text.strip():
        doc.add(tomlkit.comment("The chat API's callers; the local demo writes its own entry."))
    tokens = _table(doc, "tokens")
    tokens[CHAT_TOKEN_NAME] = _new_table({"sha256": digest_of(token), "reader": reader})
    return tomlkit.dumps(doc)


def build_curl_line(port: int, token: str) -> str:
    """A call of the demo's chat API that works as printed (in a POSIX shell)."""
    body = json.dumps(
        {"model": ASSISTANT, "messages": [{"role": "user", "content": EXAMPLE_QUESTION}]}
    )
    return (
        f"curl -s http://127.0.0.1:{port}/v1/chat/completions "
        f"-H {shlex.quote('Authorization: Bearer ' + token)} "
        f"-H 'Content-Type: application/json' -d {shlex.quote(body)}"
    )


def describe_llm(url: str | None, model: str, admins: bool) -> str:
    """What the config's [llm] makes of the answers, for the banner."""
    if not url:
        return "none (search-only answers; start with LLM_URL and LLM_MODEL for a model)"
    if admins:
        return (
            f"{url}, model {model} (the config's [llm] has settings of your own: remove "
            "that section for search-only answers)"
        )
    return f"{url}, model {model} (start without LLM_URL for search-only answers)"


def _table(doc: tomlkit.TOMLDocument | Table, name: str) -> Table:
    if name not in doc:
        doc[name] = tomlkit.table()
    found = doc[name]
    assert isinstance(found, Table), f"[{name}] is not a table"
    return found


def _new_table(values: Mapping[str, Any], comment: str = "") -> Table:
    table = tomlkit.table()
    if comment:
        table.add(tomlkit.comment(comment))
    for key, value in values.items():
        table[key] = value
    return table
