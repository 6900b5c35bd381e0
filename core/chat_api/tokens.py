"""Who calls the chat API: bearer tokens, each naming the reader whose rights bound its
answers.

The tokens file holds only each token's SHA-256, so that a copy of the file (a backup, a
config repository) lets nobody call the API:

    [tokens.alice-laptop]
    sha256 = "9f86d0…"
    reader = "@alice:example.org"   # "" or left out: public documents only

A reader is a Matrix user id, so that the source applications' `[sources.<name>.readers]`
mappings apply exactly as they do for people in rooms.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import tomllib
from dataclasses import dataclass
from pathlib import Path

from core.config.users import check_user_id
from core.ids import UserID

TOKEN_PREFIX = "kb-"
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Caller:
    """A token's owner: `name` for logs and rate limits; no `reader`: public only."""

    name: str
    reader: UserID | None


class TokensFileError(ValueError):
    """The tokens file cannot be used; the text names the entry."""


def digest_of(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def parse_tokens(text: str) -> dict[str, Caller]:
    """The callers of a tokens file by their token's SHA-256."""
    try:
        entries = tomllib.loads(text).get("tokens", {})
    except tomllib.TOMLDecodeError as exc:
        raise TokensFileError(f"not valid TOML: {exc}") from None
    callers: dict[str, Caller] = {}
    for name, entry in entries.items():
        if not isinstance(entry, dict) or set(entry) - {"sha256", "reader"}:
            raise TokensFileError(f"tokens.{name}: give sha256 and reader only")
        digest = str(entry.get("sha256", "")).lower()
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise TokensFileError(f"tokens.{name}.sha256: not a SHA-256 in hex")
        reader = str(entry.get("reader", ""))
        try:
            checked = UserID(check_user_id(reader)) if reader else None
        except ValueError as exc:
            raise TokensFileError(f"tokens.{name}.reader: {exc}") from None
        if digest in callers:
            raise TokensFileError(f"tokens.{name}: the same token as {callers[digest].name}")
        callers[digest] = Caller(name, checked)
    return callers


def decide_caller(token: str, callers: dict[str, Caller]) -> Caller | None:
    """The caller a bearer token stands for, or None."""
    wanted = digest_of(token)
    for digest, caller in callers.items():
        # Compared in constant time, so that timing says nothing about near misses.
        if hmac.compare_digest(digest, wanted):
            return caller
    return None


def build_token_entry(name: str, reader: str) -> tuple[str, str]:
    """A new token and the lines that let it in (for `knowledge-api new-token`)."""
    if not NAME.match(name):
        raise ValueError(f"the name {name!r} may have letters, digits, - and _ only")
    if reader:
        check_user_id(reader)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    lines = f'[tokens.{name}]\nsha256 = "{digest_of(token)}"\nreader = "{reader}"\n'
    return token, lines


class TokenBook:
    """The tokens file, read again when it changes. A file that is gone or broken lets
    nobody in until it is mended (and is reported): revoking a token by deleting its
    entry must hold even when the edit has a typo elsewhere."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._seen: tuple[float, int] | None = None
        self._callers: dict[str, Caller] = {}
        self.problem: str | None = None

    def callers(self) -> dict[str, Caller]:
        if self.path is None:
            return {}
        try:
            stat = os.stat(self.path)
        except OSError as exc:
            self._seen, self._callers = None, {}
            self.problem = f"{self.path}: {exc.strerror}"
            return self._callers
        seen = (stat.st_mtime_ns, stat.st_size)
        if seen != self._seen:
            self._seen = seen
            try:
                self._callers = parse_tokens(self.path.read_text(encoding="utf-8"))
                self.problem = None
            except (TokensFileError, UnicodeDecodeError, OSError) as exc:
                self._callers = {}
                self.problem = f"{self.path}: {exc}"
        return self._callers

    def find(self, token: str) -> Caller | None:
        return decide_caller(token, self.callers())
