"""Who reads an answer, and who they are in each application: tables."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.config.rights import ReaderMapping
from core.rights.readers import (
    ALWAYS,
    Audience,
    RoomMembers,
    decide_audience,
    decide_audience_holds,
    decide_knowledge_since,
    decide_open,
    decide_plaintext_only,
    decide_readers,
    decide_room_knowledge,
    map_reader,
)

ALICE, BOB, CAROL = "@alice:example.org", "@bob:example.org", "@carol:other.org"

KNOWLEDGE = (("!r", ALWAYS),)
AUDIENCES = {
    "direct chat: the asker": (
        dict(readers=(ALICE,), is_direct=True),
        Audience((ALICE,), KNOWLEDGE, "a direct chat: the asker's rights"),
    ),
    "group: every reader": (
        dict(readers=(ALICE, BOB)),
        Audience((ALICE, BOB), KNOWLEDGE, "every reader's rights"),
    ),
    "room set to public only": (
        dict(readers=(ALICE, BOB), room_public_only=True),
        Audience((), KNOWLEDGE, "the room is set to public documents only"),
    ),
    "anyone may join and read: public only": (
        dict(readers=(ALICE,), open_room=True),
        Audience((), KNOWLEDGE, "anyone may join and read the room: public documents only"),
    ),
    "too many readers": (
        dict(readers=(ALICE, BOB, CAROL)),
        Audience((), KNOWLEDGE, "more than 2 readers: public documents only"),
    ),
}


@pytest.mark.parametrize("given,expected", AUDIENCES.values(), ids=AUDIENCES.keys())
def test_decide_audience(given, expected):
    options = dict(
        is_direct=False, room_public_only=False, open_room=False, max_members=2, rooms=KNOWLEDGE
    )
    options.update({k: v for k, v in given.items() if k != "readers"})
    audience = decide_audience(ALICE, given["readers"], **options)
    assert audience == expected
    assert audience.public_only == (not expected.readers)


def room(visibility="shared", join_rule="invite", joined=None, invited=None, name="!r"):
    return RoomMembers(name, joined or {ALICE: 100.0}, invited or {}, visibility, join_rule)


READERS = {
    "shared: joined and invited read": (room(invited={BOB: 200.0}), {ALICE, BOB}),
    "invited: invited read once they join": (room("invited", invited={BOB: 200.0}), {ALICE, BOB}),
    "joined: invited people do not": (room("joined", invited={BOB: 200.0}), {ALICE}),
    "unknown visibility counts the invited: fail closed": (
        room("future_value", invited={BOB: 1.0}),
        {ALICE, BOB},
    ),
}


@pytest.mark.parametrize("given,expected", READERS.values(), ids=READERS.keys())
def test_decide_readers(given, expected):
    assert decide_readers(given) == expected


OPEN = {
    "invite only, shared": (room(), False),
    "world readable": (room("world_readable"), True),
    "public, shared history: anyone can scroll back": (room(join_rule="public"), True),
    "public, joined history: newcomers see from their join": (
        room("joined", join_rule="public"),
        False,
    ),
    "restricted (space members), shared": (room(join_rule="restricted"), True),
    "knock, shared: still by invitation": (room(join_rule="knock"), False),
}


@pytest.mark.parametrize("given,expected", OPEN.values(), ids=OPEN.keys())
def test_decide_open(given, expected):
    assert decide_open(given) is expected


SINCE = {
    "shared: everything": (room(joined={ALICE: 100.0, BOB: 300.0}), {ALICE, BOB}, True, ALWAYS),
    "joined: since the latest join": (
        room("joined", joined={ALICE: 100.0, BOB: 300.0}),
        {ALICE, BOB},
        True,
        300.0,
    ),
    "invited: since the latest membership": (
        room("invited", joined={ALICE: 100.0}, invited={BOB: 250.0}),
        {ALICE, BOB},
        True,
        250.0,
    ),
    "another room: an invited reader is not a member": (
        room(invited={BOB: 250.0}),
        {ALICE, BOB},
        False,
        None,
    ),
    "another room: a stranger is not a member": (room(), {ALICE, CAROL}, False, None),
    "another room, all joined, joined visibility": (
        room("joined", joined={ALICE: 100.0, BOB: 300.0}),
        {BOB},
        False,
        300.0,
    ),
    "retention: nothing older than the room keeps": (
        replace(room(joined={ALICE: 100.0}), kept_since=500.0),
        {ALICE},
        True,
        500.0,
    ),
    "retention older than the join: the join": (
        replace(room("joined", joined={ALICE: 600.0}), kept_since=500.0),
        {ALICE},
        True,
        600.0,
    ),
}


@pytest.mark.parametrize("given,readers,own,expected", SINCE.values(), ids=SINCE.keys())
def test_decide_knowledge_since(given, readers, own, expected):
    assert decide_knowledge_since(given, readers, own_room=own) == expected


def test_decide_room_knowledge_lists_the_room_then_rooms_all_readers_joined():
    here = room(joined={ALICE: 1.0, BOB: 1.0}, name="!here")
    both = room("joined", joined={ALICE: 10.0, BOB: 20.0}, name="!both")
    bob_invited = room(joined={ALICE: 1.0}, invited={BOB: 1.0}, name="!invited")
    alice_only = room(joined={ALICE: 1.0}, name="!alice")
    found = decide_room_knowledge(here, frozenset({ALICE, BOB}), [both, bob_invited, alice_only])
    assert found == (("!here", ALWAYS), ("!both", 20.0))


HOLDS = {
    "same readers": ({ALICE, BOB}, {ALICE, BOB}, True),
    "someone left": ({ALICE, BOB}, {ALICE}, True),
    "someone new": ({ALICE}, {ALICE, CAROL}, False),
    "one left, another came": ({ALICE, BOB}, {ALICE, CAROL}, False),
}


@pytest.mark.parametrize("computed,now,expected", HOLDS.values(), ids=HOLDS.keys())
def test_decide_audience_holds(computed, now, expected):
    assert decide_audience_holds(frozenset(computed), frozenset(now)) is expected


MAPPINGS = {
    "localpart on its homeserver": (
        ALICE,
        ReaderMapping(rule="localpart", homeserver="example.org"),
        "alice",
    ),
    "localpart elsewhere: none": (
        CAROL,
        ReaderMapping(rule="localpart", homeserver="example.org"),
        None,
    ),
    "explicit table first": (
        ALICE,
        ReaderMapping(rule="localpart", homeserver="example.org", users={ALICE: "a.smith"}),
        "a.smith",
    ),
    "matrix id passed through": (CAROL, ReaderMapping(rule="matrix_id"), CAROL),
    "no rule: none": (ALICE, ReaderMapping(), None),
}


@pytest.mark.parametrize("user,mapping,expected", MAPPINGS.values(), ids=MAPPINGS.keys())
def test_map_reader(user, mapping, expected):
    assert map_reader(user, mapping) == expected


def sealed(name: str) -> RoomMembers:
    return replace(room(name=name), encrypted=True)


PLAINTEXT_ONLY = {
    "an unencrypted room gets no encrypted room's knowledge": (
        room(name="!here"),
        [sealed("!a"), room(name="!b")],
        ("!a",),
    ),
    "an encrypted room gets every room's": (sealed("!here"), [sealed("!a"), room(name="!b")], ()),
    "every encrypted room is listed": (
        room(name="!here"),
        [sealed("!a"), sealed("!b")],
        ("!a", "!b"),
    ),
    "the room itself is never listed": (room(name="!here"), [room(name="!here")], ()),
}


@pytest.mark.parametrize("own,others,expected", PLAINTEXT_ONLY.values(), ids=PLAINTEXT_ONLY)
def test_decide_plaintext_only(own, others, expected):
    assert decide_plaintext_only(own, others) == expected


def test_the_audience_carries_the_plaintext_only_rooms_whatever_its_readers():
    for public_only in (True, False):
        found = decide_audience(
            ALICE,
            (BOB,),
            is_direct=False,
            room_public_only=public_only,
            open_room=False,
            max_members=50,
            rooms=KNOWLEDGE,
            plaintext_only=("!sealed",),
        )
        assert found.plaintext_only == ("!sealed",)
