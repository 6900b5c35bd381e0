"""Whether a question is in another language than a collection's passages (pure): a
multilingual model puts such a question farther from its answer, so its distances are
read on other anchors (embedding.Calibration.across). Its script tells, else the
language lingua is sure of in it (core/i18n/detection.py `find_sure`), never the room's:
an English question in a room that spoke German is in English."""

from __future__ import annotations

from functools import cache

from babel.core import get_global

from core.i18n.detection import DETECTED
from core.i18n.scripts import decide_script

# Unicode's names of the scripts of CLDR's script codes (babel's likely subtags:
# "mn" → "mn_Cyrl_MN"); a script not named here is not told apart (the same language).
SCRIPT_NAMES = {
    "Latn": "LATIN",
    "Cyrl": "CYRILLIC",
    "Grek": "GREEK",
    "Arab": "ARABIC",
    "Hebr": "HEBREW",
    "Hans": "CJK",
    "Hant": "CJK",
    "Jpan": "CJK",
    "Kore": "HANGUL",
    "Deva": "DEVANAGARI",
    "Thai": "THAI",
    "Geor": "GEORGIAN",
    "Armn": "ARMENIAN",
    "Beng": "BENGALI",
    "Taml": "TAMIL",
}
# Languages written in two scripts (Serbian: Cyrillic and Latin) are not told by script.
TWO_SCRIPTS = frozenset({"sr", "bs", "uz", "az", "kk"})


@cache
def decide_language_script(language: str) -> str | None:
    """The script a language is written in ("ru" → "CYRILLIC"), None when it is not
    known or not one."""
    if language in TWO_SCRIPTS:
        return None
    likely = get_global("likely_subtags").get(language.lower(), "")
    parts = likely.split("_")
    return SCRIPT_NAMES.get(parts[1]) if len(parts) >= 2 else None


def decide_across_languages(
    query: str, passages_language: str, detected_language: str | None
) -> bool:
    """Whether `query` is in another language than the passages: another script says so
    ("отпуск" on English passages); within one script, the language lingua is sure of
    in the query ("Wie viele Urlaubstage?" on English pages), when it knows the
    passages' language too. Unknown: the same language (the stricter reading: a passage
    is shown only when it is near)."""
    script = decide_script(query)
    expected = decide_language_script(passages_language)
    if script is not None and expected is not None and script != expected:
        return True
    return (
        expected == "LATIN"
        and passages_language in DETECTED
        and detected_language not in (None, passages_language)
    )
