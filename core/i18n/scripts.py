"""The script a text is written in (pure): what tells a question's language apart where
the language detector cannot (it knows eight languages of Latin script)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

# Japanese kana go with the ideographs: a Japanese question names both.
SAME_SCRIPT = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HALFWIDTH": "CJK", "FULLWIDTH": "CJK"}
# A character of these scripts is about a word, a Latin letter a fifth of one: so many
# Latin letters weigh as one of them ("如何配置Kubernetes" is Chinese).
WORD_SCRIPTS = {"CJK": 4, "HANGUL": 2}
# Links, mentions, inline code, codes and acronyms ("WG-503", "VPN") name no language.
# ASCII only: to Python, a Chinese character is a word character, and "2015年黑豹队…"
# would go whole with its year.
CODES = re.compile(
    r"https?://\S+|`[^`]*`|@\S+:\S+|[A-Za-z0-9-]*\d[A-Za-z0-9-]*|\b[A-Z]{2,}\b", re.ASCII
)


def decide_script(text: str) -> str | None:
    """The script most of the text's words are in ("LATIN", "CYRILLIC", "CJK"…), codes
    and acronyms left out ("WG-503 错误" is Chinese); None when it has no letters."""
    scripts: Counter[str] = Counter()
    for char in CODES.sub(" ", text):
        if char.isalpha():
            name = unicodedata.name(char, "").split(" ")[0]
            name = SAME_SCRIPT.get(name, name)
            scripts[name] += WORD_SCRIPTS.get(name, 1)
    return scripts.most_common(1)[0][0] if scripts else None
