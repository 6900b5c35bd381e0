"""Dates in the bot's sentences, written as the language of the event being handled
writes them (Babel's locale data: "25 Nov 2026", "25.11.2026", "25 nov. 2026")."""

from __future__ import annotations

from datetime import datetime

from babel.dates import format_skeleton

from core.i18n.catalogs import spoken_language
from core.i18n.language import ENGLISH

# (strftime for English, as the bot always wrote it; for the others, a CLDR date
# skeleton, which each language's locale data orders and punctuates its own way, and
# the time of day).
PATTERNS = {
    "day": ("%d %b %Y", "yMMMd", ""),
    "minute": ("%d %b %Y %H:%M", "yMMMd", "%H:%M"),
    "weekday": ("%a %d %b %H:%M:%S", "MMMEd", "%H:%M:%S"),
}


def format_when(moment: datetime, precision: str = "minute") -> str:
    """`moment` (aware, in the room's zone) to the day, the minute, or with its weekday."""
    english, day, time = PATTERNS[precision]
    language = spoken_language()
    if language == ENGLISH:
        return moment.strftime(english)
    written = format_skeleton(day, moment, tzinfo=moment.tzinfo, locale=language)
    return f"{written} {moment:{time}}" if time else written
