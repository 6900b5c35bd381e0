"""A live edit of `bot.log_level` takes effect at once (it is not a restart-only key)."""

from __future__ import annotations

import logging

import pytest

from bot.runtime.config_watch import ConfigWatcher, build_admin_problems
from bot.settings_holder import SettingsHolder
from core import strings
from core.config import load_config

CONFIG = """
[matrix]
homeserver = "http://127.0.0.1:8008"
user_id = "@bot:example.org"
password_env = "BOT_PASSWORD"

[bot]
log_level = "{level}"
"""
ENV = {"BOT_PASSWORD": "x"}


@pytest.fixture
def root_level():
    root = logging.getLogger()
    before = root.level
    yield root
    root.setLevel(before)


async def test_an_edited_log_level_applies_without_a_restart(tmp_path, root_level):
    path = tmp_path / "config.toml"
    path.write_text(CONFIG.format(level="INFO"))
    holder = SettingsHolder(load_config(path, ENV))
    reports: list[str] = []

    async def report(text: str) -> None:
        reports.append(text)

    watcher = ConfigWatcher(path, ENV, holder, report)
    root_level.setLevel(logging.INFO)
    path.write_text(CONFIG.format(level="DEBUG"))
    assert await watcher.reload()
    assert holder.current.bot.log_level == "DEBUG"
    assert root_level.level == logging.DEBUG
    assert not logging.getLogger("nio").isEnabledFor(logging.DEBUG), "libraries stay quiet"
    assert reports == [strings.CONFIG_APPLIED], "said in the admin room, not only logged"
    assert await watcher.reload()
    assert reports == [strings.CONFIG_APPLIED], "an unchanged file applies nothing new"


def test_problems_shown_in_the_admin_room_name_files_without_their_folders():
    shown = build_admin_problems(
        [
            "/srv/bot/config.toml: bot.answer_workers: must be at least 1",
            "rights.signing_keys.0.path: /etc/bot/keys/bot-1.pem cannot be read",
            "llm.url: http://vllm:8000/v1 is not reachable",
        ]
    )
    assert "/srv" not in shown and "/etc" not in shown
    assert "- `config.toml: bot.answer_workers: must be at least 1`" in shown
    assert "bot-1.pem cannot be read" in shown
    assert "http://vllm:8000/v1" in shown, "a URL is not a path of the host"
