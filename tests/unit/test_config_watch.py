"""A live edit of `bot.log_level` takes effect at once (it is not a restart-only key)."""

from __future__ import annotations

import logging

import pytest

from bot.config_watch import ConfigWatcher
from bot.settings_holder import SettingsHolder
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
    assert reports == [], "no restart needed"
