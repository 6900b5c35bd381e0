"""Explicit memories: "remember that ..." said to the bot, in English, German, French or
Spanish (the languages the bot speaks: its help tells people to say it so)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

REMEMBER = re.compile(
    r"^\s*(please\s+|bitte\s+|s'il te plaît,?\s+|s'il vous plaît,?\s+|por favor,?\s+)?"
    r"(remember|memori[sz]e|keep in mind|note down|make a note"
    r"|merk dir|merke dir|merken sie sich|denk daran|denke daran|notier|notiere"
    r"|souviens-toi|souvenez-vous|rappelle-toi|rappelez-vous|retiens|retenez|notez"
    r"|recuerda|recuerde|acuérdate de|ten en cuenta|tenga en cuenta|apunta|anota)"
    r"([\s,]+(that|this|dass|que|qu'))?\s*[:,]?\s*(?<=[\s:,'])(?P<fact>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
ABOUT_THE_SPEAKER = re.compile(
    r"^(i|i'm|i am|i've|i'd|my|me|mine|ich|mein|meine|meinen|mir|mich|je|j'|mon|ma|mes|moi"
    r"|yo|mi|mis|me)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class RememberRequest:
    scope: Literal["room", "user"]
    fact: str


def parse_remember(text: str) -> RememberRequest | None:
    """A request to remember something, or None. A fact about the speaker ("I work
    nights", "my team is Ops") is theirs; anything else belongs to the room."""
    match = REMEMBER.match(text)
    if match is None:
        return None
    fact = match.group("fact").strip()
    scope: Literal["room", "user"] = "user" if ABOUT_THE_SPEAKER.match(fact) else "room"
    return RememberRequest(scope, fact[0].upper() + fact[1:])
