"""A live edit of `bot.log_level` takes effect at once (it is not a restart-only key)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

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


def watched(path: Path) -> tuple[ConfigWatcher, SettingsHolder, list[str]]:
    """A watcher of `path` (an INFO config written there), its settings and what it
    said in the admin room."""
    path.write_text(CONFIG.format(level="INFO"))
    holder = SettingsHolder(load_config(path, ENV))
    reports: list[str] = []

    async def report(text: str) -> None:
        reports.append(text)

    return ConfigWatcher(path, ENV, holder, report), holder, reports


async def test_an_edited_log_level_applies_without_a_restart(tmp_path, root_level):
    path = tmp_path / "config.toml"
    watcher, holder, reports = watched(path)
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


async def test_an_edit_put_right_again_is_confirmed_in_the_admin_room(tmp_path, root_level):
    """An admin who reverts a rejected edit, or one that needed a restart, learns that
    the file is fine again: after a warning, silence read as still broken."""
    path = tmp_path / "config.toml"
    watcher, _, reports = watched(path)
    path.write_text(CONFIG.format(level="INFO") + "answer_without_mentoin = true\n")
    assert not await watcher.reload()
    path.write_text(CONFIG.format(level="INFO"))
    assert await watcher.reload()
    assert reports[-1] == strings.CONFIG_VALID_AGAIN
    path.write_text(CONFIG.format(level="INFO") + "\n[ops]\nport = 9999\n")
    assert await watcher.reload()
    assert reports[-1].startswith(strings.CONFIG_NEEDS_RESTART.split("{")[0])
    path.write_text(CONFIG.format(level="INFO"))
    assert await watcher.reload()
    assert reports[-1] == strings.CONFIG_RESTART_NOT_NEEDED
    assert await watcher.reload()
    assert len(reports) == 4, "once: a file left as it is says nothing more"
    # Put back together with a live edit: both are said.
    path.write_text(CONFIG.format(level="INFO") + "\n[ops]\nport = 9999\n")
    assert await watcher.reload()
    path.write_text(CONFIG.format(level="DEBUG"))
    assert await watcher.reload()
    assert reports[-2:] == [strings.CONFIG_APPLIED, strings.CONFIG_RESTART_NOT_NEEDED]


TICKETS = """
[sources.tickets]
token = "t"
{rights_url}
[collections.tickets]
source = "tickets"
"""


async def test_a_restricted_collection_that_can_never_be_shown_is_named(tmp_path, root_level):
    """A source-app developer added a restricted collection: "✅ applied", then every
    answer found nothing, with no warning anywhere, and they debugged their own rights
    app. The bot had no key to sign reader tokens with (or no `rights_url` to ask)."""
    path = tmp_path / "config.toml"
    watcher, _, reports = watched(path)
    url = 'rights_url = "http://127.0.0.1:1/rights"'
    path.write_text(CONFIG.format(level="INFO") + TICKETS.format(rights_url=url))
    assert await watcher.reload()
    keys = strings.RIGHTS_NO_SIGNING_KEYS.format(collections="`tickets`")
    assert reports == [strings.CONFIG_APPLIED, keys]
    path.write_text(CONFIG.format(level="DEBUG") + TICKETS.format(rights_url=url))
    assert await watcher.reload()
    assert reports == [strings.CONFIG_APPLIED, keys, strings.CONFIG_APPLIED], "said once"
    path.write_text(CONFIG.format(level="INFO") + TICKETS.format(rights_url=""))
    assert await watcher.reload()
    assert reports[-1] == strings.RIGHTS_NO_URL.format(collections="`tickets`")
    key = tmp_path / "bot.pem"
    key.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()
        )
    )
    signing = f'\n[[rights.signing_keys]]\nkid = "k1"\nprivate_key_file = "{key}"\n'
    path.write_text(CONFIG.format(level="INFO") + TICKETS.format(rights_url=url) + signing)
    assert await watcher.reload()
    assert reports[-1] == strings.CONFIG_APPLIED, "nothing left unshown"
