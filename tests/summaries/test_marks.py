"""Summary marks on both backends: of two runs that claim a room's range at once, one
wins; a failed run gives the range back; the last summary of any kind only moves on,
or back when it was not posted."""

from __future__ import annotations

import asyncio

from core.summaries.store import SqlSummaryMarks


async def test_one_of_two_processes_claims_the_range_and_a_failure_gives_it_back(open_database):
    one = await SqlSummaryMarks.open(await open_database())
    two = await SqlSummaryMarks.open(await open_database())  # another process, same database
    assert await one.last_scheduled("!ops") is None
    won = await asyncio.gather(one.claim("!ops", 0.0, 100.0), two.claim("!ops", 0.0, 100.0))
    assert sorted(won) == [False, True]
    assert await two.last_scheduled("!ops") == 100.0
    assert await one.claim("!ops", 100.0, 0.0), "the failed run moves the mark back"
    assert await two.last_scheduled("!ops") is None


async def test_the_last_summary_only_moves_forward(open_database):
    marks = await SqlSummaryMarks.open(await open_database())
    await marks.note_summary("!ops", 200.0)
    await marks.note_summary("!ops", 150.0)
    assert await marks.last_summary("!ops") == 200.0
    assert await marks.last_summary("!other") is None


async def test_a_summary_not_posted_gives_its_mark_back_unless_a_later_one_moved_it(
    open_database,
):
    marks = await SqlSummaryMarks.open(await open_database())
    await marks.note_summary("!ops", 100.0)
    await marks.note_summary("!ops", 200.0)
    await marks.give_back_summary("!ops", 200.0, 100.0)
    assert await marks.last_summary("!ops") == 100.0
    await marks.note_summary("!ops", 300.0)  # a later summary, posted
    await marks.give_back_summary("!ops", 200.0, 100.0)
    assert await marks.last_summary("!ops") == 300.0
    await marks.note_summary("!new", 50.0)
    await marks.give_back_summary("!new", 50.0, None)
    assert await marks.last_summary("!new") is None
