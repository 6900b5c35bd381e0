"""The keyword side of hybrid search, as pure functions: which of a question's words to
look for, and the query each backend's full-text index understands."""

from __future__ import annotations

import itertools
import re
import unicodedata

from nltk.stem.porter import PorterStemmer
from spacy.lang.en.stop_words import STOP_WORDS

MAX_QUERY_WORDS = 12
COMMON_WORD_SHARE = 0.1
COMMON_WORD_MIN_CHUNKS = 50


def parse_query_words(text: str) -> list[str]:
    """The question's words as FTS5 indexes them (lower case, no accents), without stop words."""
    plain = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(char for char in plain if not unicodedata.combining(char))
    return [w for w in dict.fromkeys(re.findall(r"\w+", plain)) if w not in STOP_WORDS]


# Martin Porter's original algorithm, as FTS5's `porter` tokenizer applies it.
STEMMER = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)


def stem_word(word: str) -> str:
    """The form the keyword index keeps of a word (for its frequency in the index)."""
    return STEMMER.stem(word, to_lowercase=False)


def decide_selective_words(words: list[str], frequency: dict[str, int], chunks: int) -> list[str]:
    """The words worth searching for: not those in more than a tenth of the chunks. Such
    words weigh little in BM25 but make a search visit most of the index (at 100k chunks,
    250 ms instead of a few). At least the two rarest stay. Words the index lacks stay
    too: they still count towards the two words a chunk must share with the question."""
    limit = max(COMMON_WORD_MIN_CHUNKS, chunks * COMMON_WORD_SHARE)
    rarest = sorted(words, key=lambda w: frequency.get(w, 0))[:2]
    return [w for w in words if frequency.get(w, 0) <= limit or w in rarest]


def _pairs(terms: list[str], both: str, either: str) -> str:
    """Terms of which a match holds at least two (all of them when there are fewer).

    Matching any single word (a plain OR) lets chunks that share one common word with a
    question outrank good vector hits after fusion; two shared words is the usual
    "minimum should match" compromise of keyword engines.
    """
    terms = terms[:MAX_QUERY_WORDS]
    if len(terms) <= 2:
        return both.join(terms)
    return either.join(f"({a}{both}{b})" for a, b in itertools.combinations(terms, 2))


def build_match_query(words: list[str]) -> str:
    """An FTS5 (SQLite) query; each word quoted so that no word is syntax."""
    return _pairs([f'"{word}"' for word in words], " AND ", " OR ")


def build_tsquery(words: list[str]) -> str:
    """A `to_tsquery` (PostgreSQL) query; each word quoted, so that none is an operator.
    PostgreSQL stems the words with the configured language, as it stemmed the chunks."""
    return _pairs([f"'{word}'" for word in words], " & ", " | ")
