"""The decision kinds: how each is carried out, and that every command people can type
decides to a kind of its own that names it back."""

from __future__ import annotations

import typing
from dataclasses import fields

import pytest

from bot.inbox.commands import COMMANDS
from bot.inbox.decisions import (
    DECISION_KINDS,
    Command,
    decide_command_name,
    decide_handling,
    decode_decision,
    encode_decision,
)
from bot.inbox.routing import RoutingFacts, decide_command
from core.ids import EventID, UserID

SAMPLE = {str: "x", int: 1, bool: True, EventID: EventID("$e"), UserID: UserID("@u:h")}


def _sample(kind: type) -> object:
    hints = typing.get_type_hints(kind)
    values = {}
    for field in fields(kind):
        hint = hints[field.name]
        options = typing.get_args(hint)
        values[field.name] = (
            options[0] if typing.get_origin(hint) is typing.Literal else SAMPLE[hint]
        )
    return kind(**values)


@pytest.mark.parametrize("kind", DECISION_KINDS.values(), ids=DECISION_KINDS.keys())
def test_every_kind_is_carried_out_one_way_and_stored_as_it_is(kind):
    decision = _sample(kind)
    handling = decide_handling(decision)  # type: ignore[arg-type]
    assert handling in ("reply", "work", "nothing")
    if handling == "reply":
        assert "thread_root" in {field.name for field in fields(kind)}, "a reply needs its thread"
    assert decode_decision(encode_decision(decision)) == decision  # type: ignore[arg-type]


def test_a_stored_value_this_release_does_not_have_is_decided_again():
    stored = {"kind": "Ledger", "entries": "risk", "request": "", "thread_root": "$q"}
    assert decode_decision(stored) is None


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_decides_to_a_kind_that_names_it(name):
    decision = decide_command(name, "", EventID("$q"), RoutingFacts())
    assert isinstance(decision, typing.get_args(Command))
    assert decide_command_name(decision) == name


def test_every_command_kind_is_reached_by_some_command():
    reached = {type(decide_command(name, "", EventID("$q"), RoutingFacts())) for name in COMMANDS}
    reached |= {
        type(
            decide_command(
                "summarize", "", EventID("$q"), RoutingFacts(replied_file="$f", keeps_files=True)
            )
        ),
        type(decide_command("deploy", "", EventID("$q"), RoutingFacts())),
        type(decide_command("catchup", "every weekday 9:00", EventID("$q"), RoutingFacts())),
    }
    assert reached == set(typing.get_args(Command))
