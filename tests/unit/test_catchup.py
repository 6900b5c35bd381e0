"""What one person missed, in sections (pure): tables of named cases."""

from __future__ import annotations

import pytest

from core import strings
from core.catchup.catchup import (
    MAX_POINTS,
    Reader,
    RoomCatchup,
    build_catchup_markdown,
    build_room_catchup,
    decide_addressed,
)
from core.summaries.draft import SummaryLine

BOB = Reader("@bob:x", names=("Bob Stone", "bob"), own_events=frozenset({"$mine"}))


def line(text: str, sender: str = "@ann:x", n: int = 1, **extra) -> SummaryLine:
    return SummaryLine(
        n, sender, text, float(n), f"https://matrix.to/#/!r/$e{n}", f"$e{n}", **extra
    )


ADDRESSED = {
    "mentioned in the metadata": (line("see above", mentions=("@bob:x",)), True),
    "named": (line("Bob Stone, can you look?"), True),
    "localpart as a word": (line("thanks bob!"), True),
    "a reply to his message": (line("agreed", reply_to="$mine"), True),
    "a name inside a word": (line("the bobsleigh team won"), False),
    "someone else's reply": (line("agreed", reply_to="$other"), False),
}


@pytest.mark.parametrize("said,expected", ADDRESSED.values(), ids=ADDRESSED.keys())
def test_decide_addressed(said, expected):
    assert decide_addressed(said, BOB) is expected


def test_sections_and_what_is_left_out():
    lines = [
        line("Decision: we ship on Monday.", n=1),
        line("bob, please review the notes by Friday", n=2),
        line("Dana will send the report by Tuesday", n=3),
        line("I said this myself", sender="@bob:x", n=4),
        line("the build is green again after the fix", n=5),
    ]
    room = build_room_catchup("Team", lines, BOB)
    assert [x.number for x in room.decisions] == [1]
    assert [x.number for x in room.for_you] == [2], "addressed to him before all else"
    assert [x.number for x in room.actions] == [3]
    assert [x.number for x in room.rest] == [5] and room.total == 4, "his own is not news"
    text = build_catchup_markdown("**What you missed**", [room])
    assert text.index(strings.CATCHUP_FOR_YOU) < text.index(strings.SUMMARY_DECISIONS)
    assert "([message](https://matrix.to/#/!r/$e2))" in text


def test_many_points_say_how_many_more_and_nothing_new_says_so():
    lines = [line(f"Decision: option {n} it is.", n=n) for n in range(MAX_POINTS + 3)]
    text = build_catchup_markdown("H", [build_room_catchup("Team", lines, BOB)])
    assert strings.CATCHUP_MORE.format(count=3) in text
    quiet = build_room_catchup("Quiet", [], BOB)
    assert build_catchup_markdown("H", [quiet]) == f"H\n\n{strings.CATCHUP_NOTHING}"


COUNTS = {"one": (1, "(1 new message)"), "several": (3, "(3 new messages)")}


@pytest.mark.parametrize("count,expected", COUNTS.values(), ids=COUNTS.keys())
def test_a_rooms_count_of_new_messages_is_singular_or_plural(count, expected):
    lines = [line(f"the build is green again, take {n}", n=n) for n in range(1, count + 1)]
    text = build_catchup_markdown("H", [build_room_catchup("Team", lines, BOB)])
    assert f"**Team** {expected}" in text, text


ERRORS = {
    "unreadable time": strings.CATCHUP_RANGE_UNREADABLE,
    "unreadable schedule": strings.DIGEST_UNREADABLE,
}


@pytest.mark.parametrize("message", ERRORS.values(), ids=ERRORS.keys())
def test_catchup_errors_carry_the_warning_sign_like_the_others(message):
    assert message.startswith(strings.NOTICE_PREFIX)


def test_messages_the_bot_could_not_decrypt_are_named_even_alone():
    """A room whose only news the bot could not read still says so (issue 46)."""
    room = RoomCatchup("Ops", unreadable=4)
    assert not room.empty
    text = build_catchup_markdown("**What you missed**", [room])
    assert strings.UNREADABLE_MESSAGES.format(count=4) in text
    assert strings.CATCHUP_NOTHING not in text


def test_a_catchup_names_people_as_the_room_does_and_renders_as_separate_sections():
    from markdown_it import MarkdownIt

    said = [
        SummaryLine(1, "@colleague:localhost", "Decision: we ship on Friday", 1.0, "https://l/1"),
        SummaryLine(2, "@colleague:localhost", "Lunch is at noon", 2.0, "https://l/2"),
    ]
    room = build_room_catchup("Demo", said, Reader("@demo:localhost"))
    room.names = {"@colleague:localhost": "Colleague"}
    text = build_catchup_markdown("**What you missed**", [room])
    assert "- Colleague: Decision: we ship on Friday" in text and "@colleague" not in text
    html = MarkdownIt().render(text)
    # The "Also" title is a paragraph of its own, not the tail of the decisions' list.
    assert f"<p><em>{strings.CATCHUP_REST}</em></p>" in html, html


def test_a_pasted_multi_line_message_is_one_point():
    pasted = line("build failed:\nERROR step 4/7\n1. rerun it", n=1)
    text = build_catchup_markdown(
        "**What you missed**", [build_room_catchup("Team", [pasted], BOB)]
    )
    point = next(row for row in text.splitlines() if row.startswith("- "))
    assert "ERROR step 4/7 1. rerun it" in point and "$e1" in point, text


def test_a_catchup_keeps_no_message_text_in_memory():
    """The summaries' wording remembers texts while a summary runs; a catch-up's
    messages (a redacted one among them) are read without being remembered."""
    from core.summaries.wording import decide_said

    before = decide_said.cache_info().currsize
    build_room_catchup("room", [line("We agreed to ship the secret 4.2 on Friday")], BOB)
    assert decide_said.cache_info().currsize == before
