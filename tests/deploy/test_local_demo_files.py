"""The local demo's pieces that need no homeserver: its sample documents, how it serves
them, and what it makes of an earlier run's config (bot/dev/local.py)."""

from __future__ import annotations

import json
import shlex
import tomllib

import aiohttp

from bot.dev import demo_config, local
from bot.dev.synapse import free_port

SAMPLES = local.SAMPLES


def test_no_sample_document_links_to_a_site_that_does_not_exist():
    for line in (SAMPLES / "it-faq.jsonl").read_text().splitlines():
        url = json.loads(line).get("url", "")
        assert "example.org" not in url, f"{url}: a dead link in a citation"


async def test_sample_documents_are_served_as_text_a_browser_shows():
    port = free_port()
    runner = await local._serve_samples(port)
    try:
        async with aiohttp.ClientSession() as http:
            for name, expected in [
                ("travel.md", "text/markdown; charset=utf-8"),
                ("leave.txt", "text/plain; charset=utf-8"),
                ("it-faq.jsonl", "text/plain; charset=utf-8"),
                ("badges.html", "text/html; charset=utf-8"),
            ]:
                async with http.get(f"http://127.0.0.1:{port}/{name}") as response:
                    assert response.status == 200
                    assert response.headers["Content-Type"] == expected, name
    finally:
        await runner.cleanup()


STATE = {
    "bot_user": "@bot:localhost",
    "demo_user": "@demo:localhost",
    "colleague_user": "@colleague:localhost",
    "admin_room_id": "!admin:localhost",
    "api_port": 8088,
    "chat_port": 8090,
    "ops_port": 8091,
    "mcp_port": 8092,
}
HOMESERVER = "http://127.0.0.1:8008"
ENV = {"BOT_PASSWORD": "x", "SAMPLES_TOKEN": "y", "BOT_PICKLE_KEY": "z" * 43}
DEMO_LLM = '\n[llm]\nurl = "http://127.0.0.1:1/v1"\nmodel = "m"\n'
HAND_LLM = '\n[llm]\nurl = "http://127.0.0.1:1/v1"\nmodel = "m"\nmax_retries = 0\n'


def load(text: str, tmp_path) -> local.Settings:
    path = tmp_path / "config.toml"
    path.write_text(text)
    (tmp_path / demo_config.CHAT_TOKENS_FILE).write_text("")
    return local.load_config(path, ENV)


def test_a_start_without_llm_url_returns_to_search_only_and_keeps_an_llm_written_by_hand(
    tmp_path,
):
    text = demo_config.build_config(HOMESERVER, STATE, {"LLM_URL": "http://127.0.0.1:1/v1"})
    assert load(text, tmp_path).llm.url == "http://127.0.0.1:1/v1"
    text = demo_config.update_config(text, HOMESERVER, STATE, {})
    settings = load(text, tmp_path)
    assert settings.llm.url is None, text
    assert list(settings.feedback.admins) == ["@demo:localhost"]
    assert "@colleague:localhost" in settings.invites.allowed_users
    hand = demo_config.update_config(text + HAND_LLM, HOMESERVER, STATE, {})
    assert load(hand, tmp_path).llm.url == "http://127.0.0.1:1/v1"
    assert demo_config.decide_llm_is_admins(hand) and not demo_config.decide_llm_is_admins(
        text + DEMO_LLM
    )


def test_each_service_keeps_its_own_port_and_a_chat_api_written_by_hand_stays():
    """The defect of issue 48: every `port =` line became the ingestion API's port."""
    earlier = (
        '# my notes\n[matrix]\nhomeserver = "http://old"\n[ingest_api]\nenabled = true\n'
        "port = 1\n\n# the chat API, added by hand\n[chat_api]\nenabled = true\n"
        'host = "0.0.0.0"\nport = 2\nrequests_per_minute = 5\n[ops]\nenabled = true\nport = 3\n'
    )
    text = demo_config.update_config(earlier, HOMESERVER, STATE, {})
    doc = tomllib.loads(text)
    assert doc["ingest_api"]["port"] == 8088 and doc["chat_api"]["port"] == 8090
    assert doc["ops"]["port"] == 8091, "two demos never share the health port"
    assert doc["chat_api"]["host"] == "0.0.0.0" and doc["chat_api"]["requests_per_minute"] == 5
    assert "tokens_file" not in doc["chat_api"], "the admin's section is theirs"
    assert "# my notes" in text and "# the chat API, added by hand" in text
    assert doc["matrix"]["homeserver"] == HOMESERVER
    assert demo_config.read_port(text, "chat_api") == 8090
    assert demo_config.read_port("not toml [", "chat_api") is None


def test_a_demo_of_an_earlier_release_gains_files_and_the_chat_api(tmp_path):
    earlier = (
        '[matrix]\nhomeserver = "http://old"\nuser_id = "@bot:localhost"\n'
        'password_env = "BOT_PASSWORD"\n[invites]\nallowed_users = ["@demo:localhost"]\n'
        '[ingest_api]\nenabled = true\nport = 1\n[sources.samples]\ntoken_env = "SAMPLES_TOKEN"\n'
        '[collections.handbook]\nsource = "samples"\npublic = true\n'
    )
    settings = load(demo_config.update_config(earlier, HOMESERVER, STATE, {}), tmp_path)
    assert settings.room_files_collection() == "room-files"
    assert settings.chat_api.enabled and settings.chat_api.port == 8090
    assert settings.assistants["handbook"].collections == ("handbook",)
    assert settings.ingest_api.port == 8088
    assert settings.speech.local and not settings.speech.url, "voice without an endpoint"


def test_the_demo_names_its_store_passphrase_and_an_admins_own_stays(tmp_path):
    """Without a pickle key the bot warns, at a new demo's first start, in words meant
    for production: the demo gives it one from its state file, as it does the password."""
    new = load(demo_config.build_config(HOMESERVER, STATE, {}), tmp_path)
    assert new.matrix.store_pickle_key() == ENV["BOT_PICKLE_KEY"]
    earlier = '[matrix]\nhomeserver = "http://old"\n'
    doc = tomllib.loads(demo_config.update_config(earlier, HOMESERVER, STATE, {}))
    assert doc["matrix"]["pickle_key_env"] == demo_config.PICKLE_KEY_ENV, "an earlier demo"
    own = '[matrix]\nhomeserver = "http://old"\npickle_key = "my-own-long-passphrase"\n'
    doc = tomllib.loads(demo_config.update_config(own, HOMESERVER, STATE, {}))
    assert doc["matrix"]["pickle_key"] == "my-own-long-passphrase"
    assert "pickle_key_env" not in doc["matrix"]


def test_a_speech_section_of_the_admins_own_stays():
    earlier = '[matrix]\nhomeserver = "http://old"\n[speech]\nurl = "http://whisper:8000/v1"\n'
    doc = tomllib.loads(demo_config.update_config(earlier, HOMESERVER, STATE, {}))
    assert doc["speech"] == {"url": "http://whisper:8000/v1"}


def test_the_demo_token_is_added_to_the_tokens_file_beside_others():
    from core.chat_api.tokens import decide_caller, parse_tokens

    other = '[tokens.laptop]\nsha256 = "' + "a" * 64 + '"\nreader = ""\n'
    text = demo_config.update_chat_tokens(other, "kb-one", "@demo:localhost")
    text = demo_config.update_chat_tokens(text, "kb-two", "@demo:localhost")
    callers = parse_tokens(text)
    assert len(callers) == 2, text
    assert decide_caller("kb-two", callers).reader == "@demo:localhost"
    assert decide_caller("kb-one", callers) is None, "a new demo token replaces the old"


def test_the_curl_line_survives_a_shell():
    line = demo_config.build_curl_line(8090, "kb-a'b")
    words = shlex.split(line)
    assert "Authorization: Bearer kb-a'b" in words
    body = json.loads(words[words.index("-d") + 1])
    assert body["model"] == "handbook" and body["messages"][0]["role"] == "user"
