"""The lines summaries read from the memory store, and the span it holds of each room, on
both backends: questions to the bot are kept for summaries and stay out of every history
window; a room's span starts with its first line kept, moves past lines left out and
with retention, and is dropped when the previous keeper did not stop cleanly."""

from __future__ import annotations

import time

import pytest

from core.history.line_store import RoomLine
from core.history.spans import LeftOut
from core.memory.store import SqlMemoryStore


async def add(
    store: SqlMemoryStore, room: str, n: int, text: str, *, spoken: bool = False, **line
) -> None:
    await store.add_line(
        room, RoomLine(f"$l{n}", "@ann:x", text, float(n), f"link{n}", **line), spoken=spoken
    )


async def test_lines_carry_what_summaries_need_and_questions_stay_out_of_the_dialog(
    open_database,
):
    store = await SqlMemoryStore.open(await open_database())
    await add(store, "!a", 1, "the thread's root")
    await add(
        store,
        "!a",
        2,
        "in the thread",
        thread_root="$l1",
        reply_to="$l1",
        mentions=("@bob:x", "@cid:x"),
    )
    await add(store, "!a", 3, "Knowledge Bot: when is the release?", addressed=True)
    await add(store, "!a", 4, "a voice message's words", spoken=True)
    await add(store, "!a", 5, "")
    await add(store, "!a", 6, "!summarize today")  # an edit made it a command

    lines = await store.room_lines("!a", 0.0, 10.0)
    assert [line.event_id for line in lines] == ["$l1", "$l2", "$l3"], (
        "no transcript (not a text message), no empty line, no command"
    )
    assert lines[1] == RoomLine(
        "$l2", "@ann:x", "in the thread", 2.0, "link2", "$l1", "$l1", ("@bob:x", "@cid:x")
    )
    assert lines[2].addressed
    thread = await store.room_lines("!a", 0.0, 10.0, thread_root="$l1")
    assert [line.event_id for line in thread] == ["$l1", "$l2"], "the root and its thread"
    assert [line.ts for line in await store.room_lines("!a", 2.0, 3.0)] == [2.0, 3.0]
    assert [line.ts for line in await store.room_lines("!a", 0.0, 10.0, limit=2)] == [2.0, 3.0], (
        "the newest"
    )
    assert await store.room_lines("!b", 0.0, 10.0) == [], "a room's own"

    dialog = [line.text for line in await store.lines_from("!a", 0)]
    assert "Knowledge Bot: when is the release?" not in dialog, "no window holds a question"
    assert "a voice message's words" in dialog, "transcripts are history, as before"
    first, last = (
        (await store.lines_from("!a", 0))[0].seq,
        (await store.lines_from("!a", 0))[-1].seq,
    )
    assert len(await store.lines_between("!a", first, last)) == len(dialog)

    assert (
        await store.change_line("!a", "$l3", "Knowledge Bot: when is the launch?", "@ann:x") is None
    ), "an edited question changes no window"
    assert (await store.room_lines("!a", 3.0, 3.0))[0].text == "Knowledge Bot: when is the launch?"
    assert await store.change_line("!a", "$l3", None) is None
    assert await store.room_lines("!a", 3.0, 3.0) == [], "a redacted question is gone"


async def test_only_questions_waiting_make_no_room_with_lines_to_window(open_database):
    store = await SqlMemoryStore.open(await open_database())
    await add(store, "!a", 1, "Knowledge Bot: anyone?", addressed=True)
    assert await store.rooms_with_lines() == []
    assert await store.lines_from("!a", 0) == []


async def test_a_rooms_span_starts_with_its_first_line_and_only_moves_forward(open_database):
    store = await SqlMemoryStore.open(await open_database())
    assert await store.start_keeping("keeper-1") is False, "a new store: nothing to drop"
    assert await store.line_span("!a") is None, "nothing claimed before a line is kept"
    await add(store, "!a", 10, "first")
    assert await store.line_span("!a") == pytest.approx(10.001)
    await add(store, "!a", 20, "second")
    assert await store.line_span("!a") == pytest.approx(10.001)
    await store.move_span("!a", LeftOut(25.0))
    assert await store.line_span("!a") == pytest.approx(25.001)
    await store.move_span("!a", LeftOut(5.0))
    assert await store.line_span("!a") == pytest.approx(25.001), "never back"
    await store.move_span("!b", LeftOut(7.0))
    assert await store.line_span("!b") == pytest.approx(7.001)

    await add(store, "!a", 30, "third")
    await store.purge_before("!a", 28.0)
    assert await store.line_span("!a") == pytest.approx(28.0), "retention: the cutoff at least"
    assert [line.text for line in await store.room_lines("!a", 0.0, 99.0)] == ["third"]


async def test_spans_stay_after_a_clean_stop_and_go_after_any_other(open_database):
    store = await SqlMemoryStore.open(await open_database())
    await store.start_keeping("keeper-1")
    await add(store, "!a", 10, "first")
    await store.stop_keeping("keeper-1")

    restarted = await SqlMemoryStore.open(await open_database())
    assert await restarted.start_keeping("keeper-2") is False, "stopped cleanly: spans are true"
    assert await restarted.line_span("!a") == pytest.approx(10.001)
    await store.stop_keeping("keeper-1")  # late, from a process that lost its turn
    # keeper-2 is killed: it never says it stopped.
    again = await SqlMemoryStore.open(await open_database())
    started = time.time()
    assert await again.start_keeping("keeper-3") is True, "lines may have been lost"
    assert await again.line_span("!a") is None
    await add(again, "!a", 40, "said before the restart, kept after it")
    span = await again.line_span("!a")
    assert span is not None and span >= started, (
        "the room starts again, never before the restart: a line the killed keeper lost "
        "may be newer than the first line kept now"
    )
    await again.stop_keeping("keeper-3")
    assert await again.start_keeping("keeper-4", reset=True) is True, "no history: no spans"
    assert await again.line_span("!a") is None
