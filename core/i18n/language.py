"""The language the bot speaks while it handles one event.

The inbox sets it once per event (the room's `language`, else the asker's), at the same
edge that sets the answer id for the logs; every sentence of core/strings.py read while
that event is handled comes in it. Tasks started meanwhile inherit it (contextvars), so
no function between the edge and the sentence has to pass it on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache

from babel import Locale, UnknownLocaleError

ENGLISH = "en"
# None: no language was decided (no room language, none detected): English is spoken.
LANGUAGE: ContextVar[str | None] = ContextVar("language", default=None)


def current_language() -> str:
    """The ISO 639-1 code of the language of the event being handled ("en" outside one)."""
    return LANGUAGE.get() or ENGLISH


def decided_language() -> str | None:
    """The language decided for the event being handled; None when none was."""
    return LANGUAGE.get()


@contextmanager
def speaking(language: str | None) -> Iterator[None]:
    """Sentences read inside the block are in `language` (None: as they are)."""
    if language is None:
        yield
        return
    token = LANGUAGE.set(language)
    try:
        yield
    finally:
        LANGUAGE.reset(token)


@lru_cache(maxsize=256)
def language_name(code: str) -> str:
    """The English name of a language code ("de" -> "German"), for prompts; the code
    itself when Babel does not know it."""
    try:
        return Locale.parse(code).get_language_name("en") or code
    except (UnknownLocaleError, ValueError):
        return code


def check_language_code(value: str) -> str:
    """A config value that must be a language Babel knows (ISO 639-1, "de")."""
    try:
        Locale.parse(value)
    except (UnknownLocaleError, ValueError) as exc:
        raise ValueError(f"{value[:20]!r} is not a language code like de, fr or es") from exc
    if not value.isalpha() or len(value) != 2 or not value.islower():
        raise ValueError(f"{value[:20]!r} is not a language code like de, fr or es")
    return value
