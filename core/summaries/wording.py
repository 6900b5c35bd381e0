"""What one chat message says by its wording (pure): a decision, an arrangement, an
action item, a deferral, a state of things, a question, or nothing a summary needs;
whether it leans on the message before it; whether it is talk beside the work.

The cue phrases are in `core/summaries/cues.py`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import Literal

from core.summaries.cues import (
    ACTION,
    ANAPHOR,
    ANSWER_OPENER,
    ARRANGEMENT,
    CHATTER,
    DECISION,
    DEFERRAL,
    DUE,
    MEAL_TIME,
    NAMED_ACTION,
    QUESTION_WORDS,
    REQUEST,
    ROLL_CALL,
    STATUS,
)
from core.summaries.words import count_words

Kind = Literal["decision", "action", "question"]
# What a line says, finer than where it is listed: an arrangement is listed with the
# decisions, a deferral with the open questions, an answered question with the rest.
Said = Literal["decision", "arrangement", "action", "deferral", "status", "question", "answered"]
LISTED: dict[Said, Kind | None] = {
    "decision": "decision",
    "arrangement": "decision",
    "action": "action",
    "deferral": "question",
    "status": None,
    "question": "question",
    "answered": None,
}
# Sentences end with the marks of every script: Chinese and Japanese write "。！？",
# Arabic "؟".
SENTENCE_END = re.compile(r"[^.!?。！？؟]+(?:[.!?。！？؟]+|$)")
QUESTION_MARKS = ("?", "？", "؟")
TOPIC_WORD = re.compile(r"[\w.'-]+")
ELISION = re.compile(r"^(l|d|qu|j|n|s|c)'")
# Messages whose topic words are remembered (decide_topic_words).
REMEMBERED = 16384


def decide_asks(text: str) -> bool:
    """Whether a message asks something: its last sentence, or its first one, is a
    question ("do we know how many failed? finance will ask")."""
    sentences = [part.strip() for part in SENTENCE_END.findall(text.strip()) if part.strip()]
    if not sentences:
        return False
    first = sentences[0]
    return sentences[-1].endswith(QUESTION_MARKS) or (
        first.endswith(QUESTION_MARKS)
        and (bool(QUESTION_WORDS.search(first)) or count_words(first) >= 4)
    )


def decide_any_question(text: str) -> bool:
    """Whether any sentence of a message asks ("dann B? das bottom sheet bleibt nur für
    die rad-details", where decide_asks wants the first or the last sentence to)."""
    return any(part.strip().endswith(QUESTION_MARKS) for part in SENTENCE_END.findall(text))


@lru_cache(maxsize=REMEMBERED)
def decide_said(text: str) -> Said | None:
    """What a message states on its own wording, or None for the rest of the talk."""
    stripped = text.strip()
    words = count_words(stripped)
    if DEFERRAL.search(stripped):
        return "deferral"
    if DECISION.search(stripped):
        return "decision"
    if decide_asks(stripped) and not _commits_first(stripped):
        # "can you send it by Friday?" assigns work; "lunch?" alone is no question.
        if _assigns(stripped) and DUE.search(stripped):
            return "action"
        asks = QUESTION_WORDS.search(stripped) or ROLL_CALL.search(stripped) or words >= 4
        return "question" if asks and words >= 3 else None
    if ARRANGEMENT.search(stripped):
        return "arrangement"
    if _assigns(stripped) and (DUE.search(stripped) or words >= 5 or _commits(stripped)):
        return "action"
    if STATUS.search(stripped) and words >= 3:
        return "status"
    return None


def decide_kind(text: str) -> Kind | None:
    """Where a message alone would be listed: decisions, action items or questions.
    Read without remembering the text (a catch-up's messages are not kept in memory:
    decide_said remembers only for a summary, which forgets when done)."""
    said = decide_said.__wrapped__(text)
    return LISTED[said] if said else None


def _assigns(text: str) -> bool:
    return bool(ACTION.search(text) or NAMED_ACTION.search(text))


def _commits_first(text: str) -> bool:
    """ "yes, I'll write it up. Friday 11:00?": a commitment, then a question about it."""
    # A line of punctuation alone ("?", "...") has no sentence.
    first = next(iter(SENTENCE_END.findall(text)), "").strip()
    return (
        not first.endswith(QUESTION_MARKS)
        and bool(ACTION.search(first))
        and count_words(first) >= 3
    )


def _commits(text: str) -> bool:
    """ "I'll come", "deal, I'll edit": a short commitment is an action item too."""
    found = ACTION.search(text)
    return found is not None and found.start() <= 12 and count_words(text) >= 2


def decide_chatter(text: str) -> bool:
    """Whether a message is talk beside the work (lunch, pets) and says nothing else."""
    # A meal said as a deadline is no small talk; the line's other words may still be.
    return bool(CHATTER.search(MEAL_TIME.sub(" ", text))) and not (
        DECISION.search(text) or DEFERRAL.search(text) or _assigns(text)
    )


def decide_depends(text: str) -> bool:
    """Whether a message only makes sense with the one it answers."""
    stripped = text.strip()
    if ANSWER_OPENER.search(stripped):
        return True
    # The first sentence: "Does the webinar move too? It's booked for the 12th" asks
    # something new, whatever "it" in its second sentence points back to.
    first = next(iter(SENTENCE_END.findall(stripped)), "")
    words = count_words(stripped)
    if REQUEST.search(first):
        return False  # "can you update the status page?" asks anew
    return words <= 12 and bool(ANAPHOR.search(first) or ACTION.search(first))


def forget_wording() -> None:
    """Drop the remembered wording of messages (see forget_room_words)."""
    decide_said.cache_clear()
    decide_topic_words.cache_clear()


@lru_cache(maxsize=REMEMBERED)
def decide_topic_words(text: str) -> Mapping[str, int]:
    """The words that name a subject, with their weight: long words, and twice as much
    for names with digits in them (a version, a ticket, an error code). Remembered (an
    update is weighed against every earlier line), so read-only."""
    found: dict[str, int] = {}
    for word in TOPIC_WORD.findall(text.lower()):
        word = ELISION.sub("", word).strip(".-")
        if any(c.isdigit() for c in word) and not word.isdigit() and len(word) >= 2:
            found[word] = 2  # "3.2", "inc-2291", "5xx"; a bare "30" names nothing
        elif len(word) >= 5 and word.isalpha():
            found[word] = 1
    return MappingProxyType(found)
