"""A room's ledger of decisions and action items, as summaries find them (pure): each
entry is linked to the message it comes from, so that it can be listed, followed when
that message is edited or redacted, and found later."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from core.knowledge.search.keywords import parse_query_words, stem_word
from core.summaries.addressing import decide_addressees, decide_named
from core.summaries.cues import DUE
from core.summaries.draft import SummaryDraft, SummaryLine
from core.summaries.salience import Pick
from core.timerange import resolve_deadline

EntryKind = Literal["decision", "action"]
# The words before a deadline that are not part of it ("by Friday" → "Friday").
DUE_WORDS = {"by", "before", "until", "due", "on", "bis", "vor", "am", "ab", "d'ici", "avant",
             "pour", "para", "antes"}  # fmt: skip
# "Dana will …", "I'll …" (the speaker), "@bob can you …" (the one asked).
NAMED = re.compile(r"\b([A-Z][a-z]+) will [a-z]+")
SPEAKER = re.compile(r"\b(i'?ll|i will|i can take|i'?m on it|i take)\b", re.IGNORECASE)


@dataclass(frozen=True)
class LedgerEntry:
    kind: EntryKind
    text: str
    owner: str
    due: str
    link: str
    event_id: str
    ts: float
    # The message's own words (an extractive summary): an edit of it changes the entry.
    verbatim: bool = False
    # Every message the entry comes from besides `event_id` (a model may cite several).
    cited: tuple[str, ...] = ()
    # The end of the day its deadline names (`decide_due_ts`), when it can be read.
    due_ts: float | None = None


def decide_owner(line: SummaryLine) -> str:
    """Who an action item is for, from its wording: the speaker for "I'll", a name
    before "will", or the people the message speaks to (`decide_addressees`, as the
    catch-up's "For you" reads them)."""
    if SPEAKER.search(line.text):
        return line.sender
    if named := NAMED.search(line.text):
        return named.group(1)
    return ", ".join(decide_addressees(line))


def decide_due(text: str) -> str:
    """The deadline as said ("by Friday" → "Friday"), or ""."""
    found = DUE.search(text)
    if not found:
        return ""
    first, _, rest = found.group(0).partition(" ")
    return rest if first.lower() in DUE_WORDS and rest else found.group(0)


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


def build_entries_from_picks(
    picks: Sequence[Pick], lines: Sequence[SummaryLine]
) -> list[LedgerEntry]:
    """Entries of an extractive summary: its decisions (arrangements too) and action
    items, in the words of the line that says them; the lines it answers are cited."""
    entries = []
    for pick in picks:
        line = lines[pick.main]
        cited = tuple(lines[i].event_id for i in pick.lines if i != pick.main)
        if pick.listed == "decision":
            entries.append(LedgerEntry("decision", line.text, "", "", line.link, line.event_id,
                                       line.ts, verbatim=True, cited=cited))  # fmt: skip
        elif pick.listed == "action":
            entries.append(LedgerEntry("action", line.text, decide_owner(line),
                                       decide_due(line.text), line.link, line.event_id,
                                       line.ts, verbatim=True, cited=cited))  # fmt: skip
    return entries


def build_entries_from_draft(
    draft: SummaryDraft, lines: Sequence[SummaryLine]
) -> list[LedgerEntry]:
    """Entries of a model's summary, each at the first message it names (entries that
    name no message of the summary are left out: they could not be followed)."""
    by_number = {line.number: line for line in lines}
    entries = []
    found: list[tuple[EntryKind, str, str, str, list[int]]] = [
        *(("decision", p.text, "", "", p.messages) for p in draft.decisions),
        *(("action", a.text, a.owner, a.due, a.messages) for a in draft.action_items),
    ]
    for kind, text, owner, due, numbers in found:
        sources = [by_number[n] for n in dict.fromkeys(numbers) if n in by_number]
        if not sources:
            continue
        # Dated by its latest message: a reader who joined in between never gets it.
        entries.append(LedgerEntry(
            kind, text.strip(), owner.strip(), due.strip(), sources[0].link,
            sources[0].event_id, max(line.ts for line in sources),
            cited=tuple(line.event_id for line in sources[1:]),
        ))  # fmt: skip
    return entries


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
        entry for entry in entries
        if all(w in entry.text.lower() for w in wanted)
        and (not mine or decide_named(entry.owner, mine))
        and (entry.due_ts is None or entry.due_ts >= due_after)
    ]  # fmt: skip
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
