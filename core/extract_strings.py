"""Writes the message template (core/i18n/locale/bot.pot) from core/strings.py and
brings each language's catalog up to date with it: `python -m core.extract_strings`.

Babel writes and merges the catalogs; the messages are read from the strings module
itself rather than by scanning source for `_()` calls, because every sentence the bot
says is a constant there. A new or changed message comes into each catalog untranslated
(or marked fuzzy), which tests/unit/test_i18n.py reports until a translator writes it.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

from core.i18n.catalogs import DOMAIN, LOCALE_DIR, available_languages, catalog_path
from core.i18n.language import ENGLISH

PROJECT = "matrix-knowledge-bot"


def iter_messages(module: types.ModuleType) -> Iterator[tuple[str, str]]:
    """(where, English text) of every message of the strings module, in its order."""
    skipped: frozenset[str] = getattr(module, "UNTRANSLATED", frozenset())
    for name, value in vars(module).items():
        if not name.isupper() or name in skipped:
            continue
        if isinstance(value, str):
            yield name, value
        elif isinstance(value, dict):
            for key, text in value.items():
                yield f"{name}[{key}]", text


def build_template(module: types.ModuleType) -> Catalog:
    template = Catalog(project=PROJECT, domain=DOMAIN, fuzzy=False)
    for where, text in iter_messages(module):
        flags = ("python-brace-format",) if "{" in text else ()
        template.add(text, auto_comments=[where], flags=flags)
    return template


def update_catalogs(module: types.ModuleType) -> list[str]:
    """Write the template and merge it into every language's catalog; the languages."""
    template = build_template(module)
    with (LOCALE_DIR / f"{DOMAIN}.pot").open("wb") as out:
        write_po(out, template, width=100, omit_header=False)
    languages = [lang for lang in available_languages() if lang != ENGLISH]
    for language in languages:
        with catalog_path(language).open("rb") as source:
            catalog = read_po(source, locale=language, domain=DOMAIN)
        catalog.update(template, update_header_comment=False)
        with catalog_path(language).open("wb") as out:
            write_po(out, catalog, width=100, ignore_obsolete=True)
    return languages


def start_catalog(language: str, module: types.ModuleType) -> None:
    """An empty catalog for a new language, every message untranslated."""
    catalog = Catalog(locale=language, project=PROJECT, domain=DOMAIN, fuzzy=False)
    catalog.update(build_template(module))
    with catalog_path(language).open("wb") as out:
        write_po(out, catalog, width=100)


def main(argv: list[str] | None = None) -> None:
    from core import strings

    args = sys.argv[1:] if argv is None else argv
    for language in args:  # `python -m core.extract_strings it`: start Italian
        if not catalog_path(language).exists():
            start_catalog(language, strings)
    print("updated:", ", ".join(update_catalogs(strings)) or "no catalog yet")


if __name__ == "__main__":
    main()
