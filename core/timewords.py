"""German, French and Spanish time words, read as the English words `core.timerange` knows.

"seit letzter Woche" becomes "since" + "last week" and "les 3 derniers jours" "last 3
days", so one set of rules gives every language the same meaning. Phrases are matched
whole, longest first, without case or accents. Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

LANGUAGES = ("de", "fr", "es")
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_MONTHS = (
    "january february march april may june july august september october november december"
).split()


def _words(kind: str, native: str, english: list[str] | str) -> dict[str, tuple[str, str]]:
    names = native.split()
    meanings = english if isinstance(english, list) else [english] * len(names)
    return {name: (kind, meaning) for name, meaning in zip(names, meanings, strict=True)}


def _pairs(kind: str, pairs: str) -> dict[str, tuple[str, str]]:
    return {
        native: (kind, english) for native, english in (pair.split("=") for pair in pairs.split())
    }


def _numbers(native: str) -> dict[str, tuple[str, str]]:
    return {
        name: ("number", str(n))
        for n, names in enumerate(native.split(), 1)
        for name in names.split("/")
    }


# phrase -> (kind, English). Articles add no English ("la semaine dernière" is "last week")
# but tell the finder a day from a name ("el domingo", not "Domingo"); the kinds are what
# `_plausible` asks of a question's words. "ago" makes "3 Tage" "3 days ago".
_GERMAN = {
    "seit": ("connective", "since"),
    "ab": ("connective", "from"),
    "vom": ("connective", "from"),
    "nach": ("connective", "after"),
    "vor": ("connective", "before"),
    "bis": ("connective", "until"),
    "bis zum": ("connective", "until"),
    "bis zur": ("connective", "until"),
    "am": ("connective", "on"),
    "im": ("connective", "in"),
    "während": ("connective", "during"),
    **_words("article", "der die das dem den des", ""),
    "heute": ("named", "today"),
    "heute morgen": ("named", "this morning"),
    "gestern": ("named", "yesterday"),
    "vorgestern": ("named", "2 days ago"),
    **_words(
        "modifier",
        "letzte letzten letzter letztes letztem vergangene vergangenen "
        "vergangener vergangenes vergangenem vorige vorigen voriger voriges",
        "last",
    ),
    **_words("modifier", "diese diesen dieser dieses diesem", "this"),
    **_pairs(
        "unit",
        "stunde=hour stunden=hours tag=day tage=days tagen=days woche=week "
        "wochen=weeks monat=month monate=months monaten=months jahr=year jahre=years "
        "jahren=years",
    ),
    **_numbers("ein/eine/einen/einem/einer/eins zwei drei vier fünf sechs sieben acht neun zehn"),
    "paar": ("number", "few"),
    "ein paar": ("number", "few"),
    "einige": ("number", "few"),
    **_words("weekday", "montag dienstag mittwoch donnerstag freitag samstag sonntag", _WEEKDAYS),
    "sonnabend": ("weekday", "saturday"),
    **_words(
        "month",
        "januar februar märz april mai juni juli august september oktober november dezember",
        _MONTHS,
    ),
    "jänner": ("month", "january"),
}
# "hier" is "yesterday" here and "here" in German: "ambiguous" (see `_plausible`).
_FRENCH = {
    "depuis": ("connective", "since"),
    "après": ("connective", "after"),
    "avant": ("connective", "before"),
    "jusqu'à": ("connective", "until"),
    "jusqu'au": ("connective", "until"),
    "à partir de": ("connective", "from"),
    "à partir du": ("connective", "from"),
    "à partir d'": ("connective", "from"),
    "dès": ("connective", "from"),
    "en": ("connective", "in"),
    "pendant": ("connective", "during"),
    "durant": ("connective", "during"),
    "au cours de": ("connective", "during"),
    "au cours du": ("connective", "during"),
    "au cours des": ("connective", "during"),
    "il y a": ("connective", "ago"),
    **_words("article", "le la les l' de du des d' ces ci", ""),
    "aujourd'hui": ("named", "today"),
    "ce matin": ("named", "this morning"),
    "hier": ("ambiguous", "yesterday"),
    "avant-hier": ("named", "2 days ago"),
    **_words(
        "modifier",
        "dernier dernière derniers dernières passé passée passés passées "
        "précédent précédente précédents précédentes",
        "last",
    ),
    **_words("modifier", "ce cet cette", "this"),
    **_pairs(
        "unit",
        "heure=hour heures=hours jour=day jours=days journée=day "
        "journées=days semaine=week semaines=weeks mois=month an=year ans=years "
        "année=year années=years",
    ),
    **_numbers("un/une deux trois quatre cinq six sept huit neuf dix"),
    "quelques": ("number", "few"),
    **_words("weekday", "lundi mardi mercredi jeudi vendredi samedi dimanche", _WEEKDAYS),
    **_words(
        "month",
        "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
        _MONTHS,
    ),
}
_SPANISH = {
    "desde": ("connective", "since"),
    "desde hace": ("connective", "since"),
    "después de": ("connective", "after"),
    "después del": ("connective", "after"),
    "antes de": ("connective", "before"),
    "antes del": ("connective", "before"),
    "hasta": ("connective", "until"),
    "a partir de": ("connective", "from"),
    "a partir del": ("connective", "from"),
    "en": ("connective", "in"),
    "durante": ("connective", "during"),
    "hace": ("connective", "ago"),
    **_words("article", "el la los las de del", ""),
    "hoy": ("named", "today"),
    "esta mañana": ("named", "this morning"),
    "ayer": ("named", "yesterday"),
    "anteayer": ("named", "2 days ago"),
    # Spoken Spanish says "antes de ayer" for "anteayer", not for "before yesterday".
    "antes de ayer": ("named", "2 days ago"),
    "antier": ("named", "2 days ago"),
    **_words(
        "modifier",
        "último última últimos últimas pasado pasada pasados pasadas anterior anteriores",
        "last",
    ),
    **_words("modifier", "este esta", "this"),
    **_words("article", "estos estas", ""),
    **_pairs(
        "unit",
        "hora=hour horas=hours día=day días=days semana=week semanas=weeks "
        "mes=month meses=months año=year años=years",
    ),
    **_numbers("un/uno/una dos tres cuatro cinco seis siete ocho nueve diez"),
    **_words("number", "unos unas algunos algunas", "few"),
    **_words("weekday", "lunes martes miércoles jueves viernes sábado domingo", _WEEKDAYS),
    **_words(
        "month",
        "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
        _MONTHS,
    ),
    "setiembre": ("month", "september"),
}
# Words that say which language a question is in, for the ambiguous ones ("hier").
_HINTS = {
    "de": set(
        "ist was wir ich und der die das hat haben wurde wurden sind nicht mit wer wie "
        "wo los ihr es gibt".split()
    ),
    "fr": set(
        "est qu que qui nous on a ont avons s c quoi ce les des pour avec dans il elle "
        "je vous quel quelle fait dit decide passe".split()
    ),
    "es": set("que se ha han hemos el los las por con para fue paso dijo".split()),
    # English too: a lone "Hoy" or "HEUTE" in an English question is a name, not a day.
    "en": set(
        "the what does do did is are was were we you how which of to for with and "
        "it this that".split()
    ),
}
_TOKEN = re.compile(r"\d+(?:er|re|e|o|a|º|ª)?\.?(?!\d)|\w+")
_NUMBER = re.compile(r"\d+")
_BACK = {"since", "before", "ago"}
_DURATION = re.compile(r"^(?:\d+|few) (?:hour|day|week|month|year)s?$")


def fold(text: str) -> str:
    """Lower case without accents, apostrophes and hyphens as spaces, one character for
    one so that offsets in it are offsets in `text`."""

    def one(char: str) -> str:
        if char in "'’-":
            return " "
        lower = char.lower()
        return unicodedata.normalize("NFD", lower)[0] if len(lower) == 1 else char

    return "".join(one(char) for char in text)


def _table(phrases: dict[str, tuple[str, str]]) -> dict[tuple[str, ...], tuple[str, str]]:
    return {tuple(fold(phrase).split()): meaning for phrase, meaning in phrases.items()}


TABLES = {"de": _table(_GERMAN), "fr": _table(_FRENCH), "es": _table(_SPANISH)}
_LONGEST = max(len(phrase) for table in TABLES.values() for phrase in table)


@dataclass(frozen=True)
class Item:
    kind: str  # as in the tables; "number" for digits, "unknown" for any other word
    english: str
    start: int
    end: int


def items(text: str, language: str) -> list[Item]:
    """`text` as the phrases of `language`, longest first."""
    table = TABLES[language]
    tokens = list(_TOKEN.finditer(fold(text)))
    found: list[Item] = []
    index = 0
    while index < len(tokens):
        for size in range(min(_LONGEST, len(tokens) - index), 0, -1):
            words = tuple(token.group() for token in tokens[index : index + size])
            if words in table:
                kind, english = table[words]
                break
        else:
            size, word = 1, tokens[index].group()
            number = _NUMBER.match(word)
            kind, english = ("number", number.group()) if number else ("unknown", word)
        found.append(Item(kind, english, tokens[index].start(), tokens[index + size - 1].end()))
        index += size
    return found


@dataclass(frozen=True)
class Reading:
    """An expression of one language in English: `connective` ("since", "before"…)
    and `words` for the English rules; `parses`, (text, language) pairs for dateparser."""

    connective: str
    words: str
    parses: tuple[tuple[str, str], ...]


def readings(expression: str) -> list[Reading]:
    """Its reading in each language that has a phrase in it."""
    found = []
    for language in LANGUAGES:
        parts = items(expression, language)
        if all(item.kind in ("number", "unknown") for item in parts):
            continue
        connective = ""
        if parts[0].kind == "connective":
            connective, parts = parts[0].english, parts[1:]
        while parts and parts[0].kind == "article":
            parts = parts[1:]
        if not parts:
            continue
        words = " ".join(item.english for item in parts if item.english)
        # French and Spanish put "last" after the noun: "la semaine dernière", "les 3
        # derniers jours", "el año pasado".
        words = re.sub(r"^(\d+ |few )?last (\w+)$", r"last \1\2", words)
        words = re.sub(r"^(\w+) last$", r"last \1", words)
        words = re.sub(r"^year (\d{4})$", r"\1", words)  # "im Jahr 2025"
        if _DURATION.match(words) and connective == "since":
            connective, words = "", f"last {words}"  # "seit 3 Tagen": the last 3 days
        elif _DURATION.match(words) and connective in ("before", "ago"):
            # "vor 3 Tagen", "il y a 3 jours": that day, as English reads "3 days ago"
            connective, words = "", f"{words} ago"
        # A date is read in its own language ("3. März", "1er mars"), then as the English
        # it became when every word was known ("lundi dernier": "last monday"), except a
        # bare duration: English reads "1 week" as a date, "a week" ("eine Woche") not.
        native = (expression[parts[0].start :].strip(), language)
        known = all(item.kind != "unknown" for item in parts) and not _DURATION.match(words)
        if words.endswith(" ago"):
            parses = [(words, "en")]  # "vorgestern" is "2 days ago": English's words
        else:
            parses = [native, (words, "en")] if known else [native]
        found.append(Reading("" if connective == "ago" else connective, words, tuple(parses)))
    return found


def language_of(text: str) -> str | None:
    """The language most of the little words of `text` belong to; None if no one leads."""
    words = [token.group() for token in _TOKEN.finditer(fold(text))]
    counts = sorted(
        ((sum(w in _HINTS[lang] for w in words), lang) for lang in _HINTS), reverse=True
    )
    return counts[0][1] if counts[0][0] > counts[1][0] else None


def _plausible(parts: list[Item], language: str, text_language: str | None) -> bool:
    """Whether words of a question are a time, before asking whether they resolve: a
    finder reading every word that could be one would read names and durations."""
    kinds = {item.kind for item in parts}
    if not kinds & {"named", "ambiguous", "weekday", "month", "unit"}:
        # "seit 2025", "hasta 2024"; numbers alone are English's (spaCy finds them)
        return "connective" in kinds and any(
            item.kind == "number" and len(item.english) == 4 for item in parts
        )
    # "seit 3 Tagen", "vor 3 Tagen", "il y a 3 jours" count back from now; "wir brauchen
    # 3 Tage", "en un jour", "nach 3 Tagen" are durations
    back = {item.english for item in parts if item.kind == "connective"} & _BACK
    if "unit" in kinds and "modifier" not in kinds and not back:
        return False
    if "month" in kinds and not kinds & {"connective", "number"}:
        return False  # "Mars", "Mayo", "Julio": names too; "en mars", "3 mars" are dates
    if language == "es" and "weekday" in kinds and not kinds & {"connective", "article"}:
        return False  # "Domingo" is a name, "el domingo" a day
    if kinds <= {"named", "article"} and text_language not in (None, language):
        return False  # "the Hoy plugin", "What does HEUTE mean": names in another language
    if "ambiguous" in kinds and "connective" not in kinds and text_language != language:
        return False  # German "hier" is "here": "depuis hier", or a French question
    return True


def spans(text: str) -> list[tuple[int, int]]:
    """Where German, French or Spanish time expressions may be in a question, as
    (start, end) offsets: the earliest first, then the longest."""
    text_language = language_of(text)
    found = set()
    for language in LANGUAGES:
        parts = items(text, language)
        for first in range(len(parts)):
            for last in range(first + 1, min(first + 8, len(parts)) + 1):
                if parts[last - 1].kind == "unknown":
                    break
                if _plausible(parts[first:last], language, text_language):
                    found.add((parts[first].start, parts[last - 1].end))
    return sorted(found, key=lambda span: (span[0], span[0] - span[1]))
