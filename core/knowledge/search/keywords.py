"""The keyword side of hybrid search, as pure functions: which of a question's words to
look for, the form the index keeps of each word in the collection's language, and the
query each backend's full-text index understands.

Words are stemmed by Snowball in the collection's language (PyStemmer: the same stemmers
as PostgreSQL's text search configurations), so that "Replikate" finds "Replikat" in a
German collection as "replicas" finds "replica" in an English one. A language Snowball
lacks is searched by its plain words.
"""

from __future__ import annotations

import importlib
import itertools
import re
import unicodedata
from functools import lru_cache

import Stemmer

MAX_QUERY_WORDS = 12
COMMON_WORD_SHARE = 0.1
COMMON_WORD_MIN_CHUNKS = 50
ENGLISH = "en"
# ISO 639-1 -> Snowball's (and PostgreSQL's) name of the language.
SNOWBALL = {
    "ar": "arabic",
    "hy": "armenian",
    "eu": "basque",
    "ca": "catalan",
    "cs": "czech",
    "da": "danish",
    "nl": "dutch",
    "en": "english",
    "eo": "esperanto",
    "et": "estonian",
    "fi": "finnish",
    "fr": "french",
    "de": "german",
    "el": "greek",
    "hi": "hindi",
    "hu": "hungarian",
    "id": "indonesian",
    "ga": "irish",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "no": "norwegian",
    "nb": "norwegian",
    "fa": "persian",
    "pl": "polish",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "es": "spanish",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}
# PostgreSQL's built-in text search configurations (15); other languages use `simple`.
POSTGRES_CONFIGS = frozenset(SNOWBALL.values()) - {
    "czech",
    "esperanto",
    "estonian",
    "persian",
    "polish",
}


def _plain(word: str) -> str:
    """Without accents, as FTS5's `remove_diacritics` would index it."""
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def split_words(text: str) -> list[str]:
    """The text's words, lower case (accents kept: the stemmers need them)."""
    return re.findall(r"[^\W_]+", text.lower())


@lru_cache(maxsize=64)
def stop_words(language: str) -> frozenset[str]:
    """The language's stop words (spaCy's lists; none for a language spaCy lacks)."""
    try:
        module = importlib.import_module(f"spacy.lang.{language}.stop_words")
    except ImportError:
        return frozenset()
    return frozenset(getattr(module, "STOP_WORDS", ()))


@lru_cache(maxsize=64)
def _stemmer(language: str) -> Stemmer.Stemmer | None:
    name = SNOWBALL.get(language)
    return Stemmer.Stemmer(name) if name else None


def stem_word(word: str, language: str = ENGLISH) -> str:
    """The form the keyword index keeps of a word (lower case, no accents)."""
    stemmer = _stemmer(language)
    return _plain(stemmer.stemWord(word) if stemmer else word)


def build_index_text(text: str, language: str = ENGLISH) -> str:
    """A text as the SQLite keyword index keeps it: its words' stems, in order."""
    stemmer = _stemmer(language)
    words = split_words(text)
    return " ".join(_plain(w) for w in (stemmer.stemWords(words) if stemmer else words))


def parse_query_words(text: str, language: str = ENGLISH) -> list[str]:
    """The question's words worth looking for (lower case, stop words of the language left
    out, each once), unstemmed."""
    skipped = stop_words(language)
    return [w for w in dict.fromkeys(split_words(text)) if w not in skipped]


def parse_query_stems(text: str, language: str = ENGLISH) -> list[str]:
    """The question's words as the SQLite keyword index keeps them (see stem_word), each once."""
    return list(
        dict.fromkeys(stem_word(word, language) for word in parse_query_words(text, language))
    )


def postgres_config(language: str, english: str = "english") -> str:
    """PostgreSQL's text search configuration for a collection's language; `english` is
    the one configured for English (storage.text_search_config)."""
    if language == ENGLISH:
        return english
    name = SNOWBALL.get(language, "simple")
    return name if name in POSTGRES_CONFIGS else "simple"


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
