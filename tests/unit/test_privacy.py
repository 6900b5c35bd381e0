"""The data folder is the bot's own, and libraries that log secrets stay quiet."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.logs import apply_log_level
from core.privacy import QUIET_LOGGERS, keep_private


@pytest.fixture
def restored_umask() -> Iterator[None]:
    """keep_private sets the process's umask; the test process gets its own back."""
    previous = os.umask(0o022)
    os.umask(previous)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_an_old_world_readable_data_folder_becomes_private(tmp_path, restored_umask):
    data = tmp_path / "data"
    (data / "chroma" / "segment").mkdir(parents=True)
    for path in (data, data / "chroma", data / "chroma" / "segment"):
        path.chmod(0o755)
    files = [data / "session.json", data / "state.sqlite3", data / "chroma" / "segment" / "x"]
    for file in files:
        file.write_text("x")
        file.chmod(0o644)
    script = data / "owner-script"
    script.write_text("x")
    script.chmod(0o755)
    outside = tmp_path / "outside"
    outside.write_text("x")
    outside.chmod(0o644)
    (data / "link").symlink_to(outside)

    keep_private(data)

    assert [mode(p) for p in (data, data / "chroma", data / "chroma" / "segment")] == [0o700] * 3
    assert [mode(file) for file in files] == [0o600] * 3
    assert mode(script) == 0o700, "the owner's bits are kept"
    assert mode(outside) == 0o644, "links are not followed out of the data folder"
    created = data / "created-later.sqlite3"
    created.write_text("x")
    assert mode(created) == 0o600


def test_a_missing_data_folder_is_created_private(tmp_path, restored_umask):
    keep_private(tmp_path / "new" / "data")
    assert mode(tmp_path / "new" / "data") == 0o700


@pytest.fixture
def restored_levels() -> Iterator[None]:
    names = ["", *QUIET_LOGGERS, "apscheduler.executors", "nio.responses"]
    levels = {name: logging.getLogger(name).level for name in names}
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


@pytest.mark.parametrize(
    "name", ["peewee", "nio.crypto", "openai", "httpx", "httpcore", "aiosqlite", "asyncpg"]
)
def test_libraries_that_log_secrets_stay_at_warning_at_debug(name, restored_levels):
    apply_log_level("DEBUG")
    assert logging.getLogger().level == logging.DEBUG
    assert not logging.getLogger(name).isEnabledFor(logging.INFO)
    assert logging.getLogger(name).isEnabledFor(logging.WARNING)
    assert logging.getLogger("bot.inbox.sync").isEnabledFor(logging.DEBUG)


def test_nio_does_not_repeat_each_refusal_the_bot_logs(restored_levels):
    apply_log_level("INFO")
    assert not logging.getLogger("nio.responses").isEnabledFor(logging.WARNING)
    assert logging.getLogger("nio.crypto").isEnabledFor(logging.WARNING)


def test_a_higher_root_level_also_holds_for_the_quiet_libraries(restored_levels):
    apply_log_level("ERROR")
    assert not logging.getLogger("peewee").isEnabledFor(logging.WARNING)


def test_applying_the_level_keeps_the_handlers_in_place(restored_levels):
    handler = logging.NullHandler()
    logging.getLogger().addHandler(handler)
    try:
        apply_log_level("DEBUG")
        assert handler in logging.getLogger().handlers
    finally:
        logging.getLogger().removeHandler(handler)
