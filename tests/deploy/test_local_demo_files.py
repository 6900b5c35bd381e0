"""The local demo's pieces that need no homeserver: its sample documents, how it serves
them, and what it makes of an earlier run's config (bot/dev/local.py)."""

from __future__ import annotations

import json

import aiohttp
import pytest

from bot.dev import local
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


DEMO_LLM = '\n[llm]\nurl = "http://127.0.0.1:1/v1"\nmodel = "m"\n'
HAND_LLM = '\n[llm]\nurl = "http://127.0.0.1:1/v1"\nmodel = "m"\ntemperature = 0.2\n'
DROPPED = {
    "the demo's, last": ("[bot]\nx = 1\n" + DEMO_LLM, "[bot]\nx = 1\n"),
    "the demo's, between": (
        "[bot]\nx = 1\n" + DEMO_LLM + "\n[ingest_api]\nport = 2\n",
        "[bot]\nx = 1\n\n[ingest_api]\nport = 2\n",
    ),
    "one written by hand stays": ("[bot]\nx = 1\n" + HAND_LLM, "[bot]\nx = 1\n" + HAND_LLM),
    "none": ("[bot]\nx = 1\n", "[bot]\nx = 1\n"),
}


@pytest.mark.parametrize("text,expected", DROPPED.values(), ids=DROPPED.keys())
def test_drop_demo_llm(text, expected):
    assert local.drop_demo_llm(text) == expected


def test_a_start_without_llm_url_returns_to_search_only_and_the_config_gives_feedback_admins(
    tmp_path,
):
    path = tmp_path / "config.toml"
    state = {"bot_user": "@bot:localhost", "demo_user": "@demo:localhost",
             "colleague_user": "@colleague:localhost", "admin_room_id": "!admin:localhost",
             "api_port": 8088}  # fmt: skip
    local._write_config(path, "http://127.0.0.1:8008", state)
    local._apply_llm_env(path, {"LLM_URL": "http://127.0.0.1:11434/v1", "LLM_MODEL": "m"})
    env = {"BOT_PASSWORD": "x", "SAMPLES_TOKEN": "y"}
    assert local.load_config(path, env).llm.url == "http://127.0.0.1:11434/v1"
    local._apply_llm_env(path, {})
    settings = local.load_config(path, env)
    assert settings.llm.url is None, path.read_text()
    assert list(settings.feedback.admins) == ["@demo:localhost"]
    assert "@colleague:localhost" in settings.invites.allowed_users
