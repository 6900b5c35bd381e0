"""The ledger's pure parts: owners, deadlines, entries from a model's draft, listing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from core import strings
from core.catchup.catchup import Reader, decide_addressed
from core.ledger.entries import build_dated_entry, decide_listed, decide_relevant_entries
from core.ledger.store import SqlLedgerStore
from core.ledger.text import build_ledger_text
from core.summaries.draft import ActionItem, Point, SummaryDraft, SummaryLine
from core.summaries.ledger_entries import (
    LedgerEntry,
    build_entries_from_draft,
    decide_due,
    decide_owner,
)


def line(text: str, n: int = 1, sender: str = "@ann:x", **extra) -> SummaryLine:
    return SummaryLine(n, sender, text, float(n), f"link{n}", f"$e{n}", **extra)


OWNERS = {
    "the speaker": ("I'll update the profiles tomorrow", "@ann:x"),
    "a name before will": ("Dana will send the notes by Friday", "Dana"),
    "the people asked": ("can you renew it before Monday?", "@bob:x"),
}


@pytest.mark.parametrize("text,expected", OWNERS.values(), ids=OWNERS.keys())
def test_decide_owner(text, expected):
    assert decide_owner(line(text, mentions=("@bob:x",))) == expected


def test_decide_due():
    assert decide_due("send the notes by Friday") == "Friday"
    assert decide_due("renew it before the 3rd") == "the 3rd"
    assert decide_due("no deadline here") == ""


def test_entries_of_a_draft_sit_at_their_first_known_message():
    draft = SummaryDraft(
        tldr="t",
        open_questions=[],
        decisions=[Point(text="Ship Monday", messages=[9, 2]), Point(text="x", messages=[7])],
        action_items=[ActionItem(text="Notes", owner="Dana", due="Fri", messages=[1])],
    )
    entries = build_entries_from_draft(draft, [line("a", 1), line("b", 2)])
    assert [(e.kind, e.text, e.event_id) for e in entries] == [
        ("decision", "Ship Monday", "$e2"),
        ("action", "Notes", "$e1"),
    ], "a point that names no message of the summary is left out"


def test_decide_listed_filters_by_words_and_owner_newest_first():
    entries = [
        LedgerEntry("action", "Send the budget", "Dana", "", "l", "$1", 1.0),
        LedgerEntry("action", "Review the budget", "@bob:x", "", "l", "$2", 2.0),
        LedgerEntry("action", "Book rooms", "bob", "", "l", "$3", 3.0),
    ]
    assert [e.event_id for e in decide_listed(entries, "budget")] == ["$2", "$1"]
    assert [e.event_id for e in decide_listed(entries, "", mine=["@bob:x", "bob"])] == [
        "$3",
        "$2",
    ]


async def test_the_ledger_keeps_entries_once_per_room_and_follows_its_messages(open_database):
    store = await SqlLedgerStore.open(await open_database())
    old = LedgerEntry("decision", "Ship Monday", "", "", "l1", "$1", 1.0, verbatim=True)
    new = LedgerEntry("action", "Send notes", "Dana", "Friday", "l2", "$2", 5.0)
    await store.add_entries("!a", [(old, None), (old, None), (new, 10.0)])
    assert await store.entries("!a", "decision") == [old], "found again, kept once"
    assert await store.entries("!b", "decision") == [], "a room's own"
    assert await store.entries("!a", "action", due_after=11.0) == [], "its deadline passed"
    assert await store.entries("!a", None, since=3.0) == [new], "both kinds, said since"
    await store.follow_edit("!a", "$1", "Ship Tuesday")
    assert [e.text for e in await store.entries("!a", "decision")] == ["Ship Tuesday"]
    assert await store.purge_before("!a", 2.0) == 1
    assert await store.forget_event("!a", "$2") == 1
    assert await store.entries("!a", "action") == []


async def test_a_decision_found_again_by_a_later_summary_is_listed_once(open_database):
    """A scheduled summary and a `!summarize` over the same hour find the same decision:
    an extractive one may state it by another line of the exchange, a model in other
    words. `!decisions` lists it once; what is another item stays."""
    store = await SqlLedgerStore.open(await open_database())

    def said(text: str, at: str, *cited: str, owner: str = "", due: str = "") -> LedgerEntry:
        kind = "action" if owner else "decision"
        return LedgerEntry(kind, text, owner, due, "l", at, 4.0, not text[0].isupper(), cited)

    kept = [
        said("decided: Postgres then", "$3", "$1", "$4"),
        said("The team chose Postgres for reporting", "$1", "$3", "$4"),
        said("Write the release notes", "$5", "$4", owner="Dana"),
    ]
    await store.add_entries("!a", [(entry, None) for entry in kept])
    again = [
        said("we go with Postgres for reporting", "$4", "$1", "$3"),  # another line of it
        said("The team chose Postgres for the reporting", "$1", "$3", "$4"),  # reworded
    ]
    other = [
        said("Dana owns the release", "$1", "$3", "$4"),  # another decision, same messages
        said("Release moved to Wednesday", "$7", "$3"),  # revises one: a new message
        said("Review the release notes", "$5", "$4", owner="Sam"),  # another person's
    ]
    await asyncio.gather(
        store.add_entries("!a", [(entry, None) for entry in again + other]),
        store.add_entries("!a", [(entry, None) for entry in again]),  # at the same time
    )
    listed = {(e.text, e.owner, e.due) for e in await store.entries("!a", None)}
    assert listed == {(e.text, e.owner, e.due) for e in kept + other}


RELEVANT = {
    "half of the words": ("when is the retro moved to?", ["Decision: we move the retro"]),
    "another form": ("which decisions about retros?", ["Decision: we move the retro"]),
    "too little in common": ("what is the retro budget for travel?", []),
    "only stop words": ("what is it?", []),
}


@pytest.mark.parametrize("question,expected", RELEVANT.values(), ids=RELEVANT.keys())
def test_decide_relevant_entries(question, expected):
    entries = [
        LedgerEntry("decision", "Decision: we move the retro", "", "", "l", "$1", 1.0),
        LedgerEntry("action", "Send the notes", "Dana", "", "l", "$2", 2.0),
    ]
    assert [e.text for e in decide_relevant_entries(question, entries, 3)] == expected


async def test_an_entry_goes_with_any_message_it_cites_and_long_texts_are_kept(open_database):
    store = await SqlLedgerStore.open(await open_database())
    draft = SummaryDraft(
        tldr="t",
        open_questions=[],
        action_items=[],
        decisions=[Point(text="Ship Monday " + "and more " * 600, messages=[1, 2])],
    )
    [entry] = build_entries_from_draft(draft, [line("a", 1), line("b", 2)])
    assert entry.ts == 2.0 and entry.cited == ("$e2",), "dated by its latest message"
    await store.add_entries("!a", [(entry, None)])
    assert len((await store.entries("!a", "decision"))[0].text) > 5000
    assert await store.forget_event("!a", "$e2") == 1, "the second message cited"


ASKED = {
    "a typed @name, no pill": "@bob: can you review the deployment checklist before Thursday?",
    "a whole id": "@bob:x can you renew the certificate?",
    "a name a request starts with": "bob, could you renew the certificate?",
    "the mention metadata": "can you renew the certificate?",
}


@pytest.mark.parametrize("text", ASKED.values(), ids=ASKED.keys())
def test_the_ledger_and_the_catchup_read_whom_a_request_asks_alike(text):
    metadata = ("@bob:x",) if text == ASKED["the mention metadata"] else ()
    said = line(text, mentions=metadata)
    entry = LedgerEntry("action", text, decide_owner(said), "", "l", "$1", 1.0)
    bob = ("@bob:x", "Bob Stone", "bob")
    assert decide_listed([entry], "", mine=bob) == [entry], entry.owner
    assert decide_addressed(said, Reader("@bob:x", names=bob[1:])), "For you"
    assert decide_listed([entry], "", mine=("@ann:x", "ann")) == [], "not the asker's"


def test_a_deadline_is_read_forward_and_open_until_its_day_ends():
    tuesday = datetime(2026, 11, 24, 15, 0, tzinfo=UTC)
    said = LedgerEntry(
        "action",
        "I'll write the notes by Thursday",
        "@ann:x",
        "Thursday",
        "l",
        "$1",
        tuesday.timestamp(),
    )
    dated = build_dated_entry(said, ZoneInfo("UTC"))
    assert dated.due_ts == datetime(2026, 11, 27, tzinfo=UTC).timestamp()
    wednesday = datetime(2026, 11, 25, 9, 0, tzinfo=UTC).timestamp()
    assert decide_listed([dated], "", due_after=wednesday) == [dated], "still open"
    assert decide_listed([dated], "", due_after=dated.due_ts + 1) == []
    text = build_ledger_text([dated], "action", "UTC", "!")
    assert "due Thursday (26 Nov 2026), said 24 Nov 2026" in text, text


NONE = {
    "none yet": ("", 0, strings.LEDGER_NONE.format(prefix="!")),
    "none open": ("open", 3, strings.LEDGER_NONE_OPEN.format(count=3, prefix="!")),
    "none mine": ("mine", 3, strings.LEDGER_NONE_MINE.format(count=3, prefix="!")),
    "no words": ("words", 3, strings.LEDGER_NONE_MATCHING["action"].format(count=3, prefix="!")),
}


@pytest.mark.parametrize("asked,total,expected", NONE.values(), ids=NONE.keys())
def test_an_empty_list_says_none_yet_only_when_the_ledger_is_empty(asked, total, expected):
    assert build_ledger_text([], "action", "UTC", "!", total=total, asked=asked) == expected


def test_an_entry_said_over_several_lines_is_listed_on_one():
    said = LedgerEntry(
        "action", "I'll fix it:\n1. rerun\n2. redeploy", "@ann:x", "", "l", "$1", 0.0
    )
    text = build_ledger_text([build_dated_entry(said, ZoneInfo("UTC"))], "action", "UTC", "!")
    assert "- I'll fix it: 1. rerun 2. redeploy (" in text, text
