"""Windows of the room's history, "remember that ...", and !memory / !forget replies."""

from __future__ import annotations

import pytest

from bot.features.memory.commands import build_memory_list, decide_forget
from core import strings
from core.history.line_store import HistoryLine
from core.history.windows import decide_windows
from core.memory.remember import parse_remember
from core.memory.store import Memory


def lines(first: int, count: int, ts: float = 0.0) -> list[HistoryLine]:
    return [HistoryLine(seq, "@a:x", f"line {seq}", ts, "") for seq in range(first, first + count)]


def seqs(plan) -> list[list[int]]:
    return [[line.seq for line in window] for window in plan.windows]


def test_full_windows_overlap_and_the_rest_waits():
    plan = decide_windows(lines(1, 15), 8, 2, carried=0, now=0.0, idle_seconds=900)
    assert seqs(plan) == [[1, 2, 3, 4, 5, 6, 7, 8], [7, 8, 9, 10, 11, 12, 13, 14]]
    assert (plan.next_start, plan.carried) == (13, 2)


def test_a_quiet_room_gets_its_last_lines_as_a_shorter_window_once():
    plan = decide_windows(lines(1, 5), 8, 2, carried=0, now=1000.0, idle_seconds=900)
    assert seqs(plan) == [[1, 2, 3, 4, 5]] and (plan.next_start, plan.carried) == (4, 2)
    again = decide_windows(lines(4, 2), 8, 2, carried=2, now=2000.0, idle_seconds=900)
    assert again.windows == [], "nothing new since that window"


def test_lines_after_a_short_window_continue_with_its_overlap():
    plan = decide_windows(lines(4, 8), 8, 2, carried=2, now=0.0, idle_seconds=900)
    assert seqs(plan) == [[4, 5, 6, 7, 8, 9, 10, 11]]


REMEMBER = {
    "a fact of the room": ("remember that the standup moved to 10:00", "room", "The standup…"),
    "please, and a colon": ("Please remember: deploys freeze on Fridays", "room", "Deploys…"),
    "a fact about the speaker": ("remember that I am on call this week", "user", "I am on call…"),
    "my ...": ("keep in mind my team is Ops", "user", "My team is Ops"),
    "German": ("Merk dir, dass das Standup um 10 Uhr ist", "room", "Das Standup…"),
    "German, about the speaker": ("bitte merke dir: ich habe Bereitschaft", "user", "Ich habe…"),
    "French": ("Souviens-toi que le déploiement est gelé le vendredi", "room", "Le déploiement…"),
    "French, elided": ("retiens qu'on livre lundi", "room", "On livre lundi"),
    "Spanish": ("Recuerda que mi equipo es Ops", "user", "Mi equipo es Ops"),
}


@pytest.mark.parametrize("text,scope,fact", REMEMBER.values(), ids=REMEMBER.keys())
def test_parse_remember(text, scope, fact):
    wish = parse_remember(text)
    assert wish is not None and wish.scope == scope
    assert wish.fact.startswith(fact.rstrip("…"))


@pytest.mark.parametrize("text", ["Do you remember the VPN outage?", "remember", "what to note"])
def test_questions_about_memory_are_not_requests_to_remember(text):
    assert parse_remember(text) is None


MEMORIES = [Memory(11, "", "Standup at 10", "@a:x", 0.0), Memory(12, "@b:x", "On call", "@b:x", 0)]


def test_the_memory_list_is_numbered_and_says_whom_a_memory_is_about():
    text = build_memory_list(MEMORIES, "!")
    assert "1. Standup at 10" in text and "2. On call _(about @b:x)_" in text
    assert build_memory_list([], "!") == strings.MEMORY_EMPTY


FORGET = {
    "one by its number": ("2", [12]),
    "all": ("all", [11, 12]),
    "a number that is not listed": ("3", strings.FORGET_UNKNOWN.format(number=3, prefix="!")),
    "no argument": ("", strings.FORGET_USAGE.format(prefix="!")),
    "not a number": ("the first", strings.FORGET_USAGE.format(prefix="!")),
}


@pytest.mark.parametrize("args,expected", FORGET.values(), ids=FORGET.keys())
def test_decide_forget(args, expected):
    assert decide_forget(args, MEMORIES, "!") == expected


FORGOTTEN = {
    "one says which": ([MEMORIES[1]], strings.FORGOTTEN_ONE.format(text="On call")),
    "several say how many": (MEMORIES, strings.FORGOTTEN.format(count=2)),
}


@pytest.mark.parametrize("forgotten,expected", FORGOTTEN.values(), ids=FORGOTTEN.keys())
def test_build_forgotten_names_the_one_memory_it_forgot(forgotten, expected):
    from bot.features.memory.commands import build_forgotten

    assert build_forgotten(forgotten) == expected
    if len(forgotten) == 1:
        assert "On call" in expected
