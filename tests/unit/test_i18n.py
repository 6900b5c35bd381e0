"""The bot's sentences in every language it speaks: each catalog complete, each
translation keeping its message's placeholders, each read in the event's language."""

from __future__ import annotations

import string

import pytest
from babel.messages.pofile import read_po

from core import strings
from core.extract_strings import iter_messages
from core.i18n.catalogs import available_languages, catalog_path, translate
from core.i18n.language import check_language_code, language_name, speaking

LANGUAGES = [language for language in available_languages() if language != "en"]
MESSAGES = dict(iter_messages(strings))


def _catalog(language: str):
    with catalog_path(language).open("rb") as source:
        return read_po(source, locale=language)


def _fields(text: str) -> list[tuple[str, str | None, str | None]]:
    """The placeholders of a message with their conversions and formats, in order of name."""
    parsed = string.Formatter().parse(text)
    return sorted((name, spec, conv) for _, name, spec, conv in parsed if name is not None)


def test_the_bot_speaks_german_french_and_spanish() -> None:
    assert {"de", "fr", "es"} <= set(LANGUAGES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_message_has_a_translation(language: str) -> None:
    catalog = _catalog(language)
    missing = [
        where
        for where, text in MESSAGES.items()
        if (entry := catalog.get(text)) is None or not entry.string or entry.fuzzy
    ]
    assert not missing, (
        f"{language}.po lacks (or marks fuzzy) {missing}: run python -m core.extract_strings and translate them"
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_translations_keep_the_placeholders(language: str) -> None:
    catalog = _catalog(language)
    wrong = [
        where
        for where, text in MESSAGES.items()
        if (entry := catalog.get(text)) is not None
        and entry.string
        and _fields(entry.string) != _fields(text)
    ]
    assert not wrong, f"{language}.po changes the {{placeholders}} of {wrong}"


def test_a_message_is_read_in_the_language_of_the_event() -> None:
    english = strings.HELP_HEADER
    with speaking("fr"):
        french = strings.HELP_HEADER
        descriptions = strings.COMMAND_DESCRIPTIONS
    assert french != english and french == translate(english, "fr")
    assert descriptions["help"] != strings.COMMAND_DESCRIPTIONS["help"]
    assert strings.HELP_HEADER == english  # outside the block, English again


def test_a_language_without_a_catalog_gets_english() -> None:
    with speaking("it"):
        assert strings.NOTHING_FOUND == MESSAGES["NOTHING_FOUND"]


def test_the_notice_prefix_is_the_same_in_every_language() -> None:
    with speaking("de"):
        assert strings.NOTICE_PREFIX == "⚠️ "
    assert "NOTICE_PREFIX" not in MESSAGES


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ("de", True),
        ("fr", True),
        ("es", True),
        ("pt", True),
        ("xx", False),
        ("DE", False),
        ("deu", False),
        ("german", False),
        ("", False),
    ],
)
def test_language_codes_in_the_config(value: str, accepted: bool) -> None:
    if accepted:
        assert check_language_code(value) == value
    else:
        with pytest.raises(ValueError, match="language code"):
            check_language_code(value)


def test_language_names_for_prompts() -> None:
    assert [language_name(code) for code in ("de", "fr", "es")] == ["German", "French", "Spanish"]


def test_why_a_file_is_unreadable_is_told_in_the_askers_language() -> None:
    from core.knowledge.parse.extraction import Unreadable, describe_reason

    kept = Unreadable("FILE_TOO_LARGE", size=36927, limit=1000).encode()
    assert str(Unreadable("FILE_TOO_LARGE", size=36927, limit=1000)) == (
        "it is 36,927 bytes, over the limit of 1,000 bytes"
    )
    with speaking("de"):
        assert describe_reason(kept) == "sie ist 36.927 Bytes groß, über der Grenze von 1.000 Bytes"
    # A reason kept as text by an earlier release is told as it was kept.
    assert describe_reason("it is empty") == "it is empty"


def test_a_language_without_a_catalog_gets_english_dates_too() -> None:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from core.i18n.dates import format_when

    moment = datetime(2026, 11, 25, 14, 5, tzinfo=ZoneInfo("Europe/Rome"))
    with speaking("it"):
        assert format_when(moment, "day") == "25 Nov 2026"
    with speaking("de"):
        assert format_when(moment, "day") == "25. Nov. 2026"
