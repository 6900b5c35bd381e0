"""Keeping what the bot stores and logs to the bot: its data folder holds encryption
keys, tokens and people's messages, and libraries log secrets and message text when
their loggers are let through at DEBUG."""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Callable
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


# Libraries whose records may carry what they were given, even at WARNING: nio logs an
# event it cannot validate with all of its content (an attachment's key, the text), and
# aiohttp's errors quote what was sent.
CONTENT_LOGGERS = ("nio", "aiohttp")
EVENT_ID = re.compile(r"\$[A-Za-z0-9_\-+/=.:]{8,}")
EVENT_TYPE = re.compile(r"""["']type["']\s*:\s*["']([a-z][a-z0-9_.\-]{2,80})["']""")
HEAD = re.compile(r"[^:{}\[\]()'\"\n$]{0,80}")


def build_safe_library_message(message: str) -> str:
    """What a library's log line may say: its opening words (up to the first quote,
    bracket, colon or event id) and the event ids and types it names, nothing else."""
    opening = HEAD.match(message)
    head = (opening.group().strip() if opening else "") or "a library's record"
    ids = list(dict.fromkeys(EVENT_ID.findall(message)))[:5]
    types = list(dict.fromkeys(EVENT_TYPE.findall(message)))[:5]
    details = [part for part in (", ".join(ids), ", ".join(types)) if part]
    return head + (f" ({'; '.join(details)})" if details else "") + " [content withheld]"


def withhold_library_content(record: logging.LogRecord) -> logging.LogRecord:
    """A record of CONTENT_LOGGERS keeps only event ids and types (see
    build_safe_library_message), and of an exception only its type, whatever the level."""
    if record.name.split(".")[0] in CONTENT_LOGGERS:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: say nothing of it
            message = ""
        if record.exc_info and record.exc_info[0] is not None:
            message += f": {record.exc_info[0].__name__}"
        record.msg, record.args = build_safe_library_message(message), None
        record.exc_info, record.exc_text, record.stack_info = None, None, None
    return record


class LibraryContentFilter(logging.Filter):
    """The same on a handler, for handlers of processes that did not call
    quiet_libraries (records made before it was called, other tools)."""

    def filter(self, record: logging.LogRecord) -> bool:
        withhold_library_content(record)
        return True


def _withholding_factory(
    make: Callable[..., logging.LogRecord],
) -> Callable[..., logging.LogRecord]:
    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        return withhold_library_content(make(*args, **kwargs))

    factory.withholds = True  # type: ignore[attr-defined]
    return factory


def keep_library_content_out_of_logs() -> None:
    """Every record of CONTENT_LOGGERS made from now on in this process is stripped as it
    is made, whichever handler takes it (the bot's, a test's, a log file's). Idempotent."""
    current = logging.getLogRecordFactory()
    if not getattr(current, "withholds", False):
        logging.setLogRecordFactory(_withholding_factory(current))


def quiet_libraries(*more: str) -> None:
    """Keep the loggers of QUIET_LOGGERS (and `more`) at WARNING, or at the root's level
    when higher (a logger's own level lets its records through to the root's handlers even
    when the root's level is higher)."""
    keep_library_content_out_of_logs()
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
