"""The translations of the bot's sentences: one gettext catalog per language, written
as a `.po` file in core/i18n/locale/ and compiled by Babel when first needed.

Compiling in memory keeps the `.po` files the only copy (no `.mo` to forget to rebuild
after a translation is edited); it takes a few milliseconds per language, once.
"""

from __future__ import annotations

import gettext
import io
from functools import lru_cache
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from core.i18n.language import ENGLISH, current_language

LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "bot"


def catalog_path(language: str) -> Path:
    return LOCALE_DIR / f"{language}.po"


@lru_cache(maxsize=1)
def available_languages() -> tuple[str, ...]:
    """The languages the bot speaks: English and each catalog written for it."""
    return (ENGLISH, *sorted(path.stem for path in LOCALE_DIR.glob("*.po")))


def spoken_language() -> str:
    """The language the bot's sentences are in now: the event's, where a catalog exists,
    else English (dates and numbers follow it, so that an English sentence for an
    Italian reader does not carry Italian month names)."""
    language = current_language()
    return language if language in available_languages() else ENGLISH


@lru_cache(maxsize=32)
def translations(language: str) -> gettext.NullTranslations:
    """The compiled catalog of `language`; English (the messages as written) when there
    is none, so a room set to a language without a catalog still gets every sentence."""
    path = catalog_path(language)
    if language == ENGLISH or not path.is_file():
        return gettext.NullTranslations()
    with path.open("rb") as source:
        catalog = read_po(source, locale=language, domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def translate(text: str, language: str) -> str:
    """`text` (an English message of core/strings.py) in `language`; as it is when the
    catalog lacks it."""
    if language == ENGLISH or not text:
        return text
    return translations(language).gettext(text)
