"""Settling lines and talk beside the work, without a model (pure)."""

from __future__ import annotations

from dataclasses import replace

from core.summaries.draft import SummaryLine
from core.summaries.replies import decide_reply_points
from core.summaries.salience import decide_chatter_lines, decide_points
from core.summaries.settling import decide_settled, decide_settling_points
from tests.summaries.rooms import room


def points(lines: list[SummaryLine]) -> list[tuple[int, ...]]:
    chatter = decide_chatter_lines(lines)
    picks = decide_reply_points(lines, decide_points(lines, 16), chatter)
    return [pick.lines for pick in decide_settling_points(lines, picks, chatter)]


RETENTION = room(
    ("@ana:x", "What about the retention of the events topic? We wanted to change it."),
    ("@kai:x", "It is 14 days now, disk at 78 %. Marketing wants at least 10 days."),
    ("@eli:x", "10 is enough for the disk until February, I checked"),
    ("@kai:x", "then 10"),
    ("@ana:x", "I'll switch the topic retention tomorrow morning"),
)
RETENTION[1] = replace(RETENTION[1], reply_to="$e1")  # Kai answers Ana's question


def test_a_short_line_that_repeats_a_figure_joins_the_exchange_it_settles():
    assert decide_settled(RETENTION, 3, frozenset()) == 2
    assert any({0, 3} <= set(lines) for lines in points(RETENTION)), points(RETENTION)


def test_a_question_with_a_figure_settles_nothing_itself():
    lines = room(
        ("@ana:x", "We ship 3.8 on Monday the 16th."),
        ("@kai:x", "Which minimum version for the force update? 3.5?"),
    )
    assert decide_settled(lines, 1, frozenset()) is None


def test_a_question_the_room_never_takes_up_again_stays_out_but_one_about_the_work_stays():
    lines = room(
        ("@ana:x", "The export module has two blockers, both fixed on the branch."),
        ("@bob:x", "Dana will review the two export fixes by Thursday."),
        ("@cid:x", "The staging database moves to Postgres 17 tonight."),
        ("@dan:x", "Does anyone know a decent mover? Ours cancelled on us."),
        ("@eve:x", "Do we keep the old export API for one more quarter?"),
        ("@ann:x", "The dashboards look fine after the last deploy."),
        ("@cid:x", "Postgres 17 on staging needs the new connection pool settings."),
        ("@bob:x", "The export fixes are in review, Dana started this morning."),
        ("@ana:x", "Release notes for the export module are drafted."),
        ("@eve:x", "The staging deploy is green again."),
        ("@dan:x", "Dashboards for the export jobs are updated."),
        ("@ann:x", "The connection pool settings are merged."),
    )
    kept = {index for lines_ in points(lines) for index in lines_}
    assert 3 not in kept and 4 in kept


def test_in_a_room_too_small_to_learn_from_an_open_question_stays():
    """Three messages tell nothing of what the room is about: "who updates the status
    page?" said once is kept as the open question it may be."""
    lines = room(
        ("@ana:x", "Decision: we ship Atlas on 14 December"),
        ("@ana:x", "I will write the release notes by Friday"),
        ("@ana:x", "who updates the status page?"),
    )
    kept = {index for lines_ in points(lines) for index in lines_}
    assert 2 in kept
