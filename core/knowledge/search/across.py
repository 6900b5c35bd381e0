"""Whether a question is in another language than a collection's passages (pure): a
multilingual model puts such a question farther from its answer, so its distances are
read on other anchors (embedding.Calibration.across). Its script tells, else the
language detected in it (core/i18n/detection.py), never the room's: an English question
in a room that spoke German is in English."""

from __future__ import annotations

import unicodedata
from collections import Counter

from core.i18n.detection import DETECTED

# The script of the languages not written in Latin letters (a collection's `language`).
SCRIPTS = {
    **dict.fromkeys(("ru", "uk", "bg", "sr", "be", "mk", "kk"), "CYRILLIC"),
    **dict.fromkeys(("zh", "ja"), "CJK"),
    "ko": "HANGUL",
    **dict.fromkeys(("ar", "fa", "ur"), "ARABIC"),
    "he": "HEBREW",
    "el": "GREEK",
    **dict.fromkeys(("hi", "mr", "ne"), "DEVANAGARI"),
    "th": "THAI",
}
# Japanese kana go with the ideographs: a Japanese question names both.
SAME_SCRIPT = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HALFWIDTH": "CJK", "FULLWIDTH": "CJK"}


def decide_script(text: str) -> str | None:
    """The script most of the text's letters are in ("LATIN", "CYRILLIC", "CJK"…), None
    when it has no letters."""
    scripts = Counter(
        SAME_SCRIPT.get(name, name)
        for name in (unicodedata.name(char, "").split(" ")[0] for char in text if char.isalpha())
        if name
    )
    return scripts.most_common(1)[0][0] if scripts else None


def decide_across_languages(
    query: str, passages_language: str, detected_language: str | None
) -> bool:
    """Whether `query` is in another language than the passages: another script says so
    ("отпуск" on English passages); within one script, the language detected in the
    query, when it could be told and the passages' is one the detector knows ("Wie viele
    Urlaubstage?" on English pages). Unknown: the same language (the stricter reading: a
    passage is shown only when it is near)."""
    script = decide_script(query)
    expected = SCRIPTS.get(passages_language, "LATIN")
    if script is not None and script != expected:
        return True
    return (
        expected == "LATIN"
        and passages_language in DETECTED
        and detected_language not in (None, passages_language)
    )
