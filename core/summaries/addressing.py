"""Whom a message speaks to (pure): one reading for the ledger's owners ("can you …"
asks the people it names) and the catch-up's "For you"."""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.summaries.draft import SummaryLine

# "@dana", "@dana:example.org" written in the text (not an e-mail address).
AT_NAME = re.compile(r"(?<![\w@.])@[\w.=/-]+(?::[\w-]+(?:\.[\w-]+)*(?::\d+)?)?")
# "Dana, can you …", "dana: please …": the name a request starts with.
VOCATIVE = re.compile(
    r"^([\w.-]+)[:,]\s+(please|can you|could you|would you|kannst du|könntest du|bitte"
    r"|peux-tu|pourrais-tu|tu peux|puedes|podrías|por favor)\b",
    re.IGNORECASE,
)


def decide_addressees(line: SummaryLine) -> tuple[str, ...]:
    """The people a message speaks to: those its `m.mentions` names, those it names
    with an @ ("@dana", "@dana:example.org"), and the name a request starts with ("Dana,
    can you …"); each once, in that order."""
    named = [*line.mentions, *AT_NAME.findall(line.text)]
    if vocative := VOCATIVE.match(line.text):
        named.append(vocative.group(1))
    return tuple(dict.fromkeys(name.rstrip(".") for name in named))


def _forms(name: str) -> set[str]:
    """A person's id or name as it may be written: "@dana:x" as itself and as "dana"."""
    name = name.strip().lower()
    return {form for form in (name, name.lstrip("@").split(":", 1)[0]) if form}


def decide_named(said: str, names: Sequence[str]) -> bool:
    """Whether `said` (people as the ledger writes an owner, or a model's words) names
    one of `names` (a person's id and the names others call them by), as a whole word."""
    said = said.lower()
    return any(
        re.search(rf"(?<![\w-]){re.escape(form)}(?![\w-])", said)
        for name in names
        for form in _forms(name)
    )
