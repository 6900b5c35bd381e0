"""A room's ledger entries as they are read (pure): a deadline as the time it names, the
entries a `!decisions` or `!actions` lists, and those a question recalls. The entries
themselves are found by summaries (core/summaries/ledger_entries.py)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from core.knowledge.search.keywords import parse_query_words, stem_word
from core.summaries.addressing import decide_named
from core.summaries.ledger_entries import LedgerEntry
from core.timerange import resolve_deadline


def decide_due_ts(due: str, said: datetime) -> float | None:
    """A deadline as said ("Thursday") as a time: the end of the day it names, read
    forward from when it was said (`said`, in the room's zone): never before it."""
    day = resolve_deadline(due, said) if due else None
    return (day + timedelta(days=1)).timestamp() if day is not None else None


def build_dated_entry(entry: LedgerEntry, zone: ZoneInfo) -> LedgerEntry:
    """The entry with its deadline read as a time (in the room's zone), from when it was
    said; read anew each time (an entry kept by an earlier release has a deadline it read
    backwards, from the day before it was said)."""
    said = datetime.fromtimestamp(entry.ts, zone)
    return replace(entry, due_ts=decide_due_ts(entry.due, said))


def decide_listed(
    entries: Sequence[LedgerEntry],
    words: str,
    *,
    mine: Sequence[str] = (),
    due_after: float = -math.inf,
) -> list[LedgerEntry]:
    """The entries that hold every one of `words`, with `mine` (a person's id and names)
    only theirs, with `due_after` only those without a deadline or with one after it;
    newest first."""
    wanted = re.findall(r"\w+", words.lower())
    found = [
        entry
        for entry in entries
        if all(w in entry.text.lower() for w in wanted)
        and (not mine or decide_named(entry.owner, mine))
        and (entry.due_ts is None or entry.due_ts >= due_after)
    ]
    return sorted(found, key=lambda entry: -entry.ts)


def decide_relevant_entries(
    question: str, entries: Sequence[LedgerEntry], limit: int
) -> list[LedgerEntry]:
    """The entries that share at least half of the question's words (in any form; stop
    words aside): without embeddings, shared words stand for relevance. Most shared
    first, then newest."""
    asked = {stem_word(word) for word in parse_query_words(question)}
    if not asked:
        return []
    scored = []
    for entry in entries:
        shared = len(asked & {stem_word(word) for word in parse_query_words(entry.text)})
        if shared and shared * 2 >= len(asked):
            scored.append((shared, entry.ts, entry))
    scored.sort(key=lambda item: (-item[0], -item[1]))
    return [entry for _, _, entry in scored[:limit]]


def decide_same_entry(found: LedgerEntry, known: LedgerEntry) -> bool:
    """Whether `found` is `known` found again by a later summary over the same messages
    (a scheduled one and a `!summarize`), so that `!decisions` lists it once:
    - two extractive entries (the messages' own words) that each cite the other's
      message: one exchange, stated by another of its lines;
    - otherwise (a model's words) the same messages and most of the same words (half of
      all their words, in any form): "The team chose Postgres for reporting" again.
    An action item also keeps its owner and deadline. A decision revised later ("moved
    to Wednesday", citing "on Monday") names a message the first did not, and stays."""
    if found.kind != known.kind or (found.owner, found.due) != (known.owner, known.due):
        return False
    found_cites, known_cites = {found.event_id, *found.cited}, {known.event_id, *known.cited}
    if found.verbatim and known.verbatim:
        return found.event_id in known_cites and known.event_id in found_cites
    if (found.event_id, found_cites) != (known.event_id, known_cites):
        return False
    words = [{stem_word(word) for word in parse_query_words(e.text)} for e in (found, known)]
    every = words[0] | words[1]
    return not every or len(words[0] & words[1]) * 2 >= len(every)


def decide_new_entries(
    found: Sequence[LedgerEntry], known: Sequence[LedgerEntry]
) -> list[LedgerEntry]:
    """The entries of `found` that are not `known` found again (`decide_same_entry`):
    the first wording stays, so `!decisions` does not change with every summary. Two
    entries of one summary are two, even about one message."""
    return [e for e in found if not any(decide_same_entry(e, other) for other in known)]
