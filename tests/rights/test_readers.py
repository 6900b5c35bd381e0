"""Who reads an answer, and who they are in each application: tables."""

from __future__ import annotations

import pytest

from core.config.rights import ReaderMapping
from core.rights.readers import Audience, decide_audience, map_reader

ALICE, BOB, CAROL = "@alice:example.org", "@bob:example.org", "@carol:other.org"

AUDIENCES = {
    "direct chat: the asker": (
        dict(members=(ALICE,), is_direct=True),
        Audience((ALICE,), ("!r",), "a direct chat: the asker's rights"),
    ),
    "group: every member": (
        dict(members=(ALICE, BOB)),
        Audience((ALICE, BOB), ("!r",), "every member's rights"),
    ),
    "room set to public only": (
        dict(members=(ALICE, BOB), room_public_only=True),
        Audience((), ("!r",), "the room is set to public documents only"),
    ),
    "too many members": (
        dict(members=(ALICE, BOB, CAROL)),
        Audience((), ("!r",), "more than 2 members: public documents only"),
    ),
}


@pytest.mark.parametrize("given,expected", AUDIENCES.values(), ids=AUDIENCES.keys())
def test_decide_audience(given, expected):
    options = dict(is_direct=False, room_public_only=False, max_members=2, shared_rooms=("!r",))
    options.update({k: v for k, v in given.items() if k != "members"})
    audience = decide_audience(ALICE, given["members"], **options)
    assert audience == expected
    assert audience.public_only == (not expected.readers)


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
