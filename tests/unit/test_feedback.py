"""Votes from reactions, ranking factors, and the !feedback command: tables of cases."""

from __future__ import annotations

import pytest

from bot.features.feedback.commands import (
    FeedbackRequest,
    build_export_record,
    build_feedback_reply,
    decide_feedback_request,
    decide_postable,
    decide_shown,
)
from core import strings
from core.feedback.store import RoomCounts
from core.feedback.votes import decide_adjustments, parse_vote

VOTES = {
    "thumbs up": ("\U0001f44d", "up"),
    "thumbs up, dark skin tone": ("\U0001f44d\U0001f3ff", "up"),
    "thumbs up, light skin tone": ("\U0001f44d\U0001f3fb", "up"),
    "thumbs up with the emoji variation selector": ("\U0001f44d\ufe0f", "up"),
    "thumbs down": ("\U0001f44e", "down"),
    "thumbs down, medium skin tone": ("\U0001f44e\U0001f3fd", "down"),
    "the :+1: shortcode": (":+1:", "up"),
    "the :thumbsdown: shortcode": (":thumbsdown:", "down"),
    "a heart is not a vote": ("\u2764\ufe0f", None),
    "a tick is not a vote": ("\u2705", None),
    "text is not a vote": ("agree", None),
}


@pytest.mark.parametrize("key,expected", VOTES.values(), ids=VOTES.keys())
def test_parse_vote(key, expected):
    assert parse_vote(key) == expected


def test_adjustments_stay_within_their_bounds():
    factors = decide_adjustments(
        {
            ("h", "liked"): (3, 0),
            ("h", "loved"): (50, 0),
            ("h", "hated"): (0, 50),
            ("h", "mixed"): (5, 1),
        },
        up_step=0.02,
        down_step=0.1,
        max_up=0.1,
        max_down=0.5,
    )
    assert factors[("h", "liked")] == pytest.approx(1.06)
    assert factors[("h", "loved")] == pytest.approx(1.1)
    assert factors[("h", "hated")] == pytest.approx(0.5)
    assert factors[("h", "mixed")] == pytest.approx(1.0)


ADMIN, ROOM = "@admin:x", "!admins"
REQUESTS = {
    "the summary": ("", ADMIN, ROOM, FeedbackRequest("summary")),
    "the worst five": ("worst", ADMIN, ROOM, FeedbackRequest("worst", limit=5)),
    "the worst twelve": ("worst 12", ADMIN, ROOM, FeedbackRequest("worst", limit=12)),
    "an export of a week": ("export 7", ADMIN, ROOM, FeedbackRequest("export", days=7)),
    "not an admin": ("", "@bob:x", ROOM, strings.FEEDBACK_REFUSED),
    "an admin elsewhere": ("", ADMIN, "!team", strings.FEEDBACK_REFUSED),
    "a word that is not a number": ("export soon", ADMIN, ROOM, strings.FEEDBACK_USAGE),
    "too many words": ("worst 3 4", ADMIN, ROOM, strings.FEEDBACK_USAGE),
}


@pytest.mark.parametrize("args,sender,room,expected", REQUESTS.values(), ids=REQUESTS.keys())
def test_decide_feedback_request(args, sender, room, expected):
    found = decide_feedback_request(
        args, sender=sender, room=room, admins=(ADMIN,), admin_room=ROOM, prefix="!"
    )
    assert found == (expected.format(prefix="!") if isinstance(expected, str) else expected)


def test_no_admin_room_means_nobody():
    found = decide_feedback_request(
        "", sender=ADMIN, room=ROOM, admins=(ADMIN,), admin_room=None, prefix="!"
    )
    assert found == strings.FEEDBACK_REFUSED


def test_the_report_shows_rooms_periods_and_the_worst_answers_with_sources():
    worst = [
        {
            "answer_id": "a1",
            "room": "!team",
            "question": "How do I book trains?",
            "up": 0,
            "down": 2,
            "comments": ["the link is dead"],
            "readers": [ADMIN, "@ann:example.org"],
            "sources": [
                {
                    "title": "Travel",
                    "collection": "handbook",
                    "document_id": "travel",
                    "url": "",
                    "score": 0.0312,
                }
            ],
        }
    ]
    text = build_feedback_reply(
        FeedbackRequest("summary"),
        counts={7: [RoomCounts("!team", 1, 2)], 30: [RoomCounts("!team", 4, 2)]},
        worst=worst,
        room_readers={ADMIN},
        room_encrypted=True,
        via="@bot:example.org",
    )
    team = "[!team](https://matrix.to/#/%21team?via=example.org)"
    assert f"| {team} | 1 / 2 | 4 / 2 |" in text, "a room link: clients show its name"
    assert f"👎 2 · 👍 0: “How do I book trains?” in {team}" in text
    assert "Travel (handbook/travel, score 0.031)" in text and "the link is dead" in text
    empty = build_feedback_reply(
        FeedbackRequest("summary"),
        counts={7: [], 30: []},
        worst=[],
        room_readers={ADMIN},
        room_encrypted=True,
        via="@bot:example.org",
    )
    assert strings.FEEDBACK_NONE in empty and strings.FEEDBACK_NO_WORST in empty


SHOWN = {
    "every reader was in the audience": ([ADMIN, "@ann:x"], {ADMIN}, True),
    "a reader was not": ([ADMIN], {ADMIN, "@dave:x"}, False),
    "stored before readers were kept: nobody": ([], {ADMIN}, False),
}


@pytest.mark.parametrize("answer,room,expected", SHOWN.values(), ids=SHOWN.keys())
def test_decide_shown(answer, room, expected):
    assert decide_shown(answer, room) is expected


def test_a_hidden_answer_shows_counts_and_ids_only():
    item = {
        "answer_id": "a1",
        "room": "!team",
        "question": "What is the secret budget?",
        "up": 1,
        "down": 2,
        "comments": ["wrong figure"],
        "readers": [ADMIN],
        "sources": [
            {
                "title": "Budget 2027",
                "collection": "wiki",
                "document_id": "budget",
                "url": "",
                "score": None,
            }
        ],
    }
    text = build_feedback_reply(
        FeedbackRequest("worst"),
        counts={},
        worst=[item],
        room_readers={ADMIN, "@dave:x"},
        room_encrypted=True,
        via="@bot:example.org",
    )
    assert "a1" in text and "👎 2 · 👍 1" in text
    for secret in ("secret budget", "Budget 2027", "wrong figure"):
        assert secret not in text
    record = {
        **item,
        "event_id": "$e",
        "created": 1.0,
        "trace": [{"prompt": "secret"}],
        "votes": [{"user": ADMIN, "vote": "down", "ts": 1.0}],
    }
    hidden = build_export_record(record, {ADMIN, "@dave:x"}, True)
    assert hidden == {
        "answer_id": "a1",
        "event_id": "$e",
        "room": "!team",
        "created": 1.0,
        "hidden": True,
        "up": 0,
        "down": 1,
    }
    assert build_export_record(record, {ADMIN}, True) == record


POSTABLE = {
    "from an unencrypted room, anywhere": (False, False, True),
    "from an encrypted room, into an encrypted one": (True, True, True),
    "from an encrypted room, not into an unencrypted one": (True, False, False),
    "of unknown origin (an earlier release), not into an unencrypted one": (None, False, False),
    "of unknown origin, into an encrypted one": (None, True, True),
}


@pytest.mark.parametrize("origin,room,expected", POSTABLE.values(), ids=POSTABLE.keys())
def test_decide_postable(origin, room, expected):
    assert decide_postable(origin, room) is expected


def test_an_encrypted_rooms_answer_is_hidden_in_an_unencrypted_admin_room():
    item = {
        "answer_id": "a1",
        "room": "!sealed",
        "question": "What is the Lyra budget?",
        "up": 0,
        "down": 1,
        "comments": ["too low"],
        "readers": [ADMIN],
        "encrypted": True,
        "sources": [],
    }
    for encrypted_room, shown in ((False, False), (True, True)):
        text = build_feedback_reply(
            FeedbackRequest("worst"),
            counts={},
            worst=[item],
            room_readers={ADMIN},
            room_encrypted=encrypted_room,
            via="@bot:example.org",
        )
        assert ("Lyra budget" in text) is shown and ("too low" in text) is shown
        assert shown or "a1" in text, "hidden, the line names the answer"
    record = {**item, "event_id": "$e", "created": 1.0, "trace": [], "votes": []}
    assert build_export_record(record, {ADMIN}, False)["hidden"] is True


def test_a_redacted_question_is_said_to_be_removed():
    item = {
        "answer_id": "a1",
        "room": "!team",
        "question": "",
        "up": 0,
        "down": 1,
        "comments": [],
        "readers": [ADMIN],
        "encrypted": False,
        "sources": [],
    }
    text = build_feedback_reply(
        FeedbackRequest("worst"),
        counts={},
        worst=[item],
        room_readers={ADMIN},
        room_encrypted=False,
        via="@bot:example.org",
    )
    assert strings.FEEDBACK_NO_QUESTION in text and "“”" not in text


def test_the_refusal_names_the_keys_that_allow_feedback():
    assert "`feedback.admins`" in strings.FEEDBACK_REFUSED
    assert "`bot.admin_room`" in strings.FEEDBACK_REFUSED
