"""The decisions and action items a summary finds, as entries of the room's ledger
(pure): each entry is linked to the message it comes from, so that it can be listed,
followed when that message is edited or redacted, and found later (core/ledger)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from core.summaries.addressing import decide_addressees
from core.summaries.cues import DUE
from core.summaries.draft import SummaryDraft, SummaryLine
from core.summaries.salience import Pick, decide_carried_actions
from core.summaries.sidetracks import build_subject_words
from core.summaries.wording import decide_said

EntryKind = Literal["decision", "action"]
# The words before a deadline that are not part of it ("by Friday" → "Friday").
DUE_WORDS = {
    "by",
    "before",
    "until",
    "due",
    "on",
    "bis",
    "vor",
    "am",
    "ab",
    "d'ici",
    "avant",
    "pour",
    "para",
    "antes",
}
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


def build_entries_from_picks(
    picks: Sequence[Pick], lines: Sequence[SummaryLine], points: Sequence[Pick] = ()
) -> list[LedgerEntry]:
    """Entries of an extractive summary: its decisions (arrangements too) and action
    items, in the words of the line that says them, as the summary lists them: each
    pick's main line, citing the pick's other lines, and the action items a decision's
    pick carries (salience.decide_carried_actions), each citing the decision it carries
    out (a sibling's redaction does not take it away). A decision is said by the line
    that names what its point (`points`, the summary's) discussed before it
    (`decide_stated_decision`)."""
    entries = []
    for pick, carried in zip(picks, decide_carried_actions(picks, lines), strict=True):
        if pick.listed in ("decision", "action"):
            stated = decide_stated_decision(pick, lines, points)
            cited = tuple(lines[i].event_id for i in pick.lines if i != stated)
            entries.append(_entry(pick.listed, lines[stated], cited))
        entries += [_entry("action", lines[i], (lines[pick.main].event_id,)) for i in carried]
    return entries


def decide_stated_decision(
    pick: Pick, lines: Sequence[SummaryLine], points: Sequence[Pick] = ()
) -> int:
    """The line of a decision's pick that says what was decided: of its own lines
    worded as a decision, the one that names most of what was discussed before its main
    line in the summary's point that has it ("Postgres or MongoDB?" … "Decided then. Who
    writes the plan?" "We go with Postgres": the last), the main line on a tie. A ledger
    lists the line alone, so it should say what; the summary quotes the whole exchange."""
    if pick.said != "decision":
        return pick.main
    around = next((point.lines for point in points if pick.main in point.lines), pick.lines)
    before = frozenset[str]().union(
        *(build_subject_words(lines[i].text) for i in around if i < pick.main)
    )
    # Not a line before the main one: it is what was weighed ("Let's go with MongoDB"
    # before "Agreed. We go with Postgres then"), and names itself.
    stated = [
        i
        for i in pick.lines
        if i == pick.main
        or (i > pick.main and i not in pick.recalled and decide_said(lines[i].text) == "decision")
    ]
    return max(
        stated, key=lambda i: (len(build_subject_words(lines[i].text) & before), i == pick.main)
    )


def _entry(kind: EntryKind, line: SummaryLine, cited: tuple[str, ...]) -> LedgerEntry:
    action = kind == "action"
    return LedgerEntry(
        kind,
        line.text,
        decide_owner(line) if action else "",
        decide_due(line.text) if action else "",
        line.link,
        line.event_id,
        line.ts,
        verbatim=True,
        cited=cited,
    )


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
        entries.append(
            LedgerEntry(
                kind,
                text.strip(),
                owner.strip(),
                due.strip(),
                sources[0].link,
                sources[0].event_id,
                max(line.ts for line in sources),
                cited=tuple(line.event_id for line in sources[1:]),
            )
        )
    return entries
