"""Talk beside the work, learned from the room itself (pure): an exchange that names
nothing the rest of the room names.

The work of a room comes back: a service, a ticket, a customer, a version is named again
messages later. A train delayed by a dog, a recipe, last night's match are said once and
dropped. So an exchange is a sidetrack when (almost) none of its subject words (spaCy's stop
words of every language left out, and the senders' names) occurs in a message outside
it and the messages just around it, and it carries no figures. Words are compared by
their first letters, so that "Retention" and "Retention-Thema", "обучение" and
"обучения" meet in any language without a stemmer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache

from core.knowledge.search.keywords import stop_words
from core.summaries.draft import SummaryLine
from core.summaries.words import CJK, build_cjk_pairs

# The languages whose stop words are left out together: a room may mix them, and a stop
# word of one is seldom a subject word of another.
LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "ru", "pl", "zh", "ja")
# Letters two words share at the start to count as one subject word.
PREFIX = 5
# Letters of a word, at least, to name a subject ("bug" and "API" do, with a figure).
SUBJECT_LETTERS = 4
# Messages on each side of an exchange that still belong to it.
AROUND = 1
# Subject words an exchange shares with the rest of the room, at least, to be work (one
# alone may be a common word: "night", "years").
SHARED = 2
# Messages a room has, at least, for what it talks about to tell its work from talk
# beside it: in a smaller one, a question said once ("who updates the status page?")
# is as likely the open question of the day as small talk, and is kept.
LEARN_FROM = 12
# A bot's account, by the convention of Matrix bots and bridges: "deploy-bot", "ci_bot",
# "bot.alerts" ("bot" as a part of its own: "talbot" and "abbot" are people).
BOT = re.compile(r"(?:^|[-_.=])bots?\d*(?:$|[-_.=])", re.IGNORECASE)
# Figures that make an exchange work talk whatever its words ("KW 52", "7:30", "3.6").
FIGURES = 2
WORD = re.compile(r"[^\W_]+(?:[.,:/-][^\W_]+)*")


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    return frozenset().union(*(stop_words(language) for language in LANGUAGES))


# Messages whose subject words are remembered: a summary asks for each line's many
# times (each exchange is weighed against the whole room), and a long room's summary
# would otherwise spend most of its time here.
REMEMBERED = 16384


@lru_cache(maxsize=REMEMBERED)
def build_subject_words(text: str) -> frozenset[str]:
    """The words of a message that name a subject, cut to their first letters; names
    with figures in them ("3.8", "db-repl-02", "4:30") whole, bare numbers left out
    (a "40 min" here and a "40" there name nothing in common); Chinese and Japanese by
    their character pairs (core/summaries/words.py)."""
    text = unicodedata.normalize("NFC", text)  # "é" as one character, as most clients send it
    found: set[str] = set(build_cjk_pairs(text))
    for word in WORD.findall(CJK.sub(" ", text.lower())):
        if word in _stop_words() or word.isdigit():
            continue
        if any(char.isdigit() for char in word):
            found.add(word)
        else:  # "events-topic": each part
            parts = re.split(r"[.,:/-]", word)
            found.update(
                p[:PREFIX] for p in parts if len(p) >= SUBJECT_LETTERS and p not in _stop_words()
            )
    return frozenset(found)


def forget_room_words() -> None:
    """Drop the remembered words of messages and rooms: a summary's texts (a redacted
    message's among them) are not kept in memory after it."""
    build_subject_words.cache_clear()
    _fold.cache_clear()
    _room_words.cache_clear()


def build_sender_names(senders: Iterable[str]) -> frozenset[str]:
    """The senders' names as subject words without accents ("@olga.smirnova:example.org"
    → "olga", "smirn"), to leave out of what a room talks about: everyone says them. A
    bot's account ("@deploy-bot", "@alert_bot") names its job, not a person: "deploy"
    and "alert" stay words of the talk."""
    localparts = (sender.split(":")[0].lstrip("@") for sender in senders)
    return frozenset(
        _fold(word)
        for localpart in localparts
        if not BOT.search(localpart)
        for word in build_subject_words(localpart)
    )


def decide_names(words: frozenset[str], names: frozenset[str]) -> frozenset[str]:
    """The `words` that are one of the senders' `names`, accents aside ("Amélie" is
    @amelie)."""
    return frozenset(word for word in words if _fold(word) in names)


@lru_cache(maxsize=REMEMBERED)
def _fold(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def build_figures(text: str) -> frozenset[str]:
    """The figures a message holds: numbers, times, versions, amounts."""
    return frozenset(word for word in WORD.findall(text) if any(char.isdigit() for char in word))


def _senders(lines: Sequence[SummaryLine]) -> frozenset[str]:
    return frozenset(line.sender for line in lines)


@lru_cache(maxsize=4)
def _room_words(
    texts: tuple[str, ...], senders: frozenset[str]
) -> tuple[tuple[frozenset[str], ...], dict[str, list[int]]]:
    """Each line's subject words (the senders' names left out) and the lines that say
    each word: built once for a room, which a summary asks about an exchange at a time
    (a scan of a long room per exchange took most of its time). Read-only."""
    names = build_sender_names(senders)
    words = tuple(
        (found := build_subject_words(text)) - decide_names(found, names) for text in texts
    )
    where: dict[str, list[int]] = {}
    for index, found in enumerate(words):
        for word in found:
            where.setdefault(word, []).append(index)
    return words, where


def decide_sidetrack(
    lines: Sequence[SummaryLine],
    indexes: Collection[int],
    figures: int = FIGURES,
    work: Collection[int] = (),
) -> bool:
    """Whether the lines at `indexes` are talk beside the work: fewer than SHARED of
    their subject words are said elsewhere in the room (besides the lines just around
    each), none of them by a line of the work (`work`: lines the summary keeps for
    what they state), and they hold fewer than `figures` different figures."""
    if len(lines) < LEARN_FROM:
        return False
    if len(frozenset().union(*(build_figures(lines[i].text) for i in indexes))) >= figures:
        return False
    words, where = _room_words(tuple(line.text for line in lines), _senders(lines))
    # Said again further on, even by a line of the same exchange (an update hours later).
    shared = {
        word for i in indexes for word in words[i] if any(abs(j - i) > AROUND for j in where[word])
    }
    work = set(work)
    if any(
        j in work and abs(j - i) > AROUND for i in indexes for word in words[i] for j in where[word]
    ):
        return False
    return len(shared) < SHARED
