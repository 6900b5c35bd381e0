"""What a summary without a model must not leave out: decisions, action items (who does
what, by when) and open questions, found by their wording (pure).

Cue phrases rather than a classifier: chat decisions and assignments are said in a few
stock ways ("we agreed", "let's go with", "Dana will … by Friday", "can you … ?"), and a
miss only costs a line that the representative messages may still cover.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

Kind = Literal["decision", "action", "question"]
KINDS: tuple[Kind, ...] = ("decision", "action", "question")

DECISION = re.compile(
    r"\b(we('ve| have)? (decided|agreed|settled|chose|picked)|decided|agreed"
    r"|let'?s go with|we('ll| will) go with|going with|approved|final(ly)?:? we)\b"
    r"|\b(decision|decided|resolved):",  # no \b after a colon: "Decision: …" is one
    re.IGNORECASE,
)
WEEKDAY = r"(mon|tues|wednes|thurs|fri|satur|sun)day"
DUE = re.compile(
    rf"\b(by|before|until|due|on) (the )?({WEEKDAY}|tomorrow|tonight|monday|eod|end of"
    r"|next \w+|\d{1,2}(st|nd|rd|th)?\b|january|february|march|april|may|june|july"
    r"|august|september|october|november|december)",
    re.IGNORECASE,
)
ACTION = re.compile(
    r"(\b(i'?ll|i will|i can take|i'?m on it|i take)\b"
    r"|^(@?\w+[:,] )?(please|can you|could you|would you)\b|\b(todo|action item|owner)\b"
    r"|\bassign(ed)? to\b)",
    re.IGNORECASE,
)
# Someone by name taking work on ("Dana will send …"): case matters for the name.
NAMED_ACTION = re.compile(r"\b[A-Z][a-z]+ will [a-z]+")
QUESTION_WORDS = re.compile(
    r"^(who|what|when|where|why|how|which|should|shall|do|does|did|is|are|can|could|"
    r"will|would|have|has)\b",
    re.IGNORECASE,
)


def decide_kind(text: str) -> Kind | None:
    """Whether a message states a decision, assigns an action, or asks a real question."""
    stripped = text.strip()
    if DECISION.search(stripped):
        return "decision"
    if stripped.endswith("?"):
        asks = QUESTION_WORDS.search(stripped) or len(stripped.split()) >= 4
        # "can you send it by Friday?" assigns work; "can you?" alone is not a question.
        if _assigns(stripped) and DUE.search(stripped):
            return "action"
        return "question" if asks and len(stripped.split()) >= 3 else None
    if _assigns(stripped) and (DUE.search(stripped) or len(stripped.split()) >= 5):
        return "action"
    return None


def _assigns(text: str) -> bool:
    return bool(ACTION.search(text) or NAMED_ACTION.search(text))


def decide_salient(texts: Sequence[str], limit: int) -> list[tuple[int, Kind]]:
    """Up to `limit` (index, kind) of the messages that must be in the summary:
    decisions first, then action items, then questions, each in time order."""
    seen: set[str] = set()
    found = []
    for index, text in enumerate(texts):
        kind = decide_kind(text)
        if kind and text.strip().lower() not in seen:  # a message said again counts once
            seen.add(text.strip().lower())
            found.append((index, kind))
    found.sort(key=lambda item: (KINDS.index(item[1]), item[0]))
    return found[:limit]
