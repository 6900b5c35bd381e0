"""The language a person writes in, detected locally with lingua (its models ship in
its wheel: nothing is downloaded, no text leaves the process)."""

from __future__ import annotations

import asyncio
import re
import threading
from functools import lru_cache

from lingua import IsoCode639_1, Language, LanguageDetector, LanguageDetectorBuilder

# The languages told apart: those the bot speaks (core/i18n/locale) and the other
# languages of Western Europe's workplaces, which the model answers in. Fewer languages
# make short messages more reliable and the detector smaller (~220 MiB for these,
# tests/bench/bench_languages.py).
DETECTED = ("en", "de", "fr", "es", "it", "pt", "nl", "pl")
# How far the likeliest language must lead the next one (lingua's relative distance);
# below it, a short message ("ok", "budget") has no language of its own.
MIN_DISTANCE = 0.25
# How sure lingua must be of a text's language (its confidence, 0-1) for `find_sure`:
# a few keywords in English ("guest wifi password": Italian 0.57) are not; a short
# question in German ("Passwort vergessen": 0.72, "Urlaubstage?": 0.92) is.
SURE = 0.7
# Mentions, links and inline code say nothing of the language; nor do codes and
# acronyms ("WG-503", "VPN"), which tip short questions towards English. Not
# scripts.CODES: that one is ASCII (for CJK), where "ÄNDERUNG" would lose "NDERUNG".
NOISE = re.compile(r"https?://\S+|`[^`]*`|@\S+:\S+|<[^>]+>|\b[\w-]*\d[\w-]*\b|\b[A-Z]{2,}\b")


_LOADING = threading.Lock()


@lru_cache(maxsize=4)
def _detector(languages: tuple[str, ...]) -> LanguageDetector:
    """Built once per process and set of languages (bots started in one process, as the
    tests do, share its ~220 MiB); lingua's detector is safe to use from several threads."""
    chosen = [Language.from_iso_code_639_1(getattr(IsoCode639_1, c.upper())) for c in languages]
    builder = LanguageDetectorBuilder.from_languages(*chosen)
    # Preloaded: lingua otherwise loads them at the first detection, wherever that is.
    builder = builder.with_minimum_relative_distance(MIN_DISTANCE)
    return builder.with_preloaded_language_models().build()


def _plain(text: str) -> str | None:
    """What of the text tells its language (NOISE left out); None when no letter is left."""
    plain = NOISE.sub(" ", text).strip()
    return plain if any(char.isalpha() for char in plain) else None


class LanguageFinder:
    """Detects the language of a message (the models load with `load`, else on first use)."""

    def __init__(self, languages: tuple[str, ...] = DETECTED) -> None:
        self._languages = languages

    def _model(self) -> LanguageDetector:
        with _LOADING:
            return _detector(self._languages)

    async def load(self) -> None:
        """Load the models now. lingua holds the GIL while it loads them (~2 s): the
        whole process stalls, threads or not, so a bot does it before it takes the
        account's lease rather than at its first message, when a stall could cost it
        the lease."""
        await asyncio.to_thread(self._model)

    def find(self, text: str) -> str | None:
        """The ISO 639-1 code of the text's language; None when it is not clear."""
        plain = _plain(text)
        if plain is None:
            return None
        found = self._model().detect_language_of(plain)
        return found.iso_code_639_1.name.lower() if found else None

    def find_sure(self, text: str) -> str | None:
        """`find`, only when lingua is at least SURE of it (a search reads the distances
        of a question in another language on other anchors: a guess would loosen them)."""
        plain = _plain(text)
        if plain is None:
            return None
        values = self._model().compute_language_confidence_values(plain)
        if not values or values[0].value < SURE:
            return None
        return str(values[0].language.iso_code_639_1.name.lower())

    async def detect(self, text: str) -> str | None:
        """`find`, off the event loop (the first call loads the models: ~2 s)."""
        return await asyncio.to_thread(self.find, text)
