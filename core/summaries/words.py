"""Words of a chat line in any script (pure).

Chinese and Japanese are written without spaces: "部署后内存从五百涨到九百" is one
whitespace "word". A line's length is counted as words, a run of such characters as
one word per CJK_WORD_CHARACTERS characters (a Chinese word has about two), and its
subject terms are the character pairs of the run (as search engines index these
scripts), so that lines that name the same thing meet without a segmenter. Japanese
writes its grammar (particles, endings: "を", "しました") in hiragana and its subjects in
kanji and katakana, so a run's hiragana cuts it and yields no pairs: "デプロイを確認しました"
names "デプ", "プロ", "ロイ", "確認", not "を確" or "まし".
"""

from __future__ import annotations

import re

# Kana and CJK ideographs (Korean is written with spaces: its words count as words).
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]+")
CJK_WORD_CHARACTERS = 2
HIRAGANA = re.compile(r"[\u3040-\u309f]+")


def count_words(text: str) -> int:
    """The words of a line: whitespace-separated ones, a run of CJK characters counted
    as one word per CJK_WORD_CHARACTERS characters."""
    count = 0
    for part in text.split():
        runs = CJK.findall(part)
        if not runs:
            count += 1
            continue
        count += sum(-(-len(run) // CJK_WORD_CHARACTERS) for run in runs)
        count += 1 if CJK.sub("", part).strip("，。！？、：；,.!?:;") else 0
    return count


def build_cjk_pairs(text: str) -> frozenset[str]:
    """The pairs of consecutive CJK characters of a line (a lone character alone), but
    none of hiragana: Japanese grammar, not its subjects."""
    pairs: set[str] = set()
    for run in CJK.findall(HIRAGANA.sub(" ", text)):
        pairs.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    return frozenset(pairs)
