"""Keeping what the bot stores and logs to the bot: its data folder holds encryption
keys, tokens and people's messages, and libraries log secrets and message text when
their loggers are let through at DEBUG."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

# Files and folders are created for the owner only (0600, 0700).
PRIVATE_UMASK = 0o077

# Loggers that print secrets or message text below WARNING, kept at WARNING whatever the
# bot's level: peewee logs SQL parameters, among them nio's pickled Olm account and Megolm
# sessions; nio logs responses (the login's access token), event contents and to-device
# payloads; openai, httpx and httpcore log requests (older openai versions whole bodies:
# prompts quote the room's messages; newer ones send through httpx2 and httpcore2); hpack
# logs HTTP/2 headers (Authorization); urllib3, aiohttp and chromadb log URLs, cookies and
# payloads; SQLAlchemy (the scheduler's job store) logs SQL with its parameters once INFO
# is enabled.
QUIET_LOGGERS = (
    "peewee",
    "nio",
    "openai",
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "hpack",
    "urllib3",
    "aiohttp",
    "chromadb",
    "sqlalchemy",
    # Both log every statement with its parameters (message text) at DEBUG.
    "aiosqlite",
    "asyncpg",
)


def quiet_libraries(*more: str) -> None:
    """Keep the loggers of QUIET_LOGGERS (and `more`) at WARNING, or at the root's level
    when higher (a logger's own level lets its records through to the root's handlers even
    when the root's level is higher)."""
    level = max(logging.WARNING, logging.getLogger().getEffectiveLevel())
    for name in (*QUIET_LOGGERS, *more):
        logging.getLogger(name).setLevel(level)


def create_private_files() -> None:
    """From now on, files and folders this process creates are its owner's only."""
    os.umask(PRIVATE_UMASK)


def keep_private(data_dir: Path) -> None:
    """Create files for the owner only, and make the data folder private with everything
    already in it (folders of older versions were world-readable)."""
    create_private_files()
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    _take_away_others_access(data_dir)
    for folder, subfolders, files in os.walk(data_dir):
        for name in (*subfolders, *files):
            _take_away_others_access(Path(folder) / name)


def _take_away_others_access(path: Path) -> None:
    """Clear the group's and others' bits, keeping the owner's."""
    try:
        status = path.lstat()
        # A link's own mode means nothing, and its target may be outside the data folder.
        if stat.S_ISLNK(status.st_mode) or not status.st_mode & 0o077:
            return
        path.chmod(stat.S_IMODE(status.st_mode) & ~0o077)
    except FileNotFoundError:
        return  # removed meanwhile (a SQLite journal of a running knowledge-api, say)
    except PermissionError:
        # Owned by another account (a copy made as root, say): say so, the start goes on.
        log.warning("cannot make %s private: it belongs to another user", path)
