"""The memory store on both backends: memories stay in their room and within the limit,
turns are replaced, history lines are kept once and leave when their window is stored."""

from __future__ import annotations

from core.history.line_store import RoomLine
from core.memory.store import HistoryWindow, SqlMemoryStore, Turn


async def test_memories_stay_in_their_room_within_the_limit_and_can_be_forgotten(open_database):
    store = await SqlMemoryStore.open(await open_database())
    for n in range(4):  # the oldest goes beyond the limit
        await store.add_memory("!a", "", f"room fact {n}", "@ann:x", keep=3)
    mine = await store.add_memory("!a", "@ann:x", "I take the train", "@ann:x", keep=10)
    await store.add_memory("!b", "", "other room", "@bob:x", keep=3)
    room = ["room fact 1", "room fact 2", "room fact 3"]
    assert [m.text for m in await store.memories("!a", "@ann:x")] == [*room, "I take the train"]
    assert [m.text for m in await store.memories("!a", "@bob:x")] == room, "the user's own"
    assert await store.forget("!b", [mine.id]) == 0, "never across rooms"
    assert await store.forget("!a", [mine.id]) == 1
    assert await store.forget("!a", []) == 0, "forgetting nothing (no memories matched)"
    assert [m.text for m in await store.memories("!a", "@ann:x")] == room


async def test_a_conversations_last_turn_is_replaced(open_database):
    store = await SqlMemoryStore.open(await open_database())
    await store.set_turn("!a", "$t", Turn("first?", "first?", "answered", 1.0))
    await store.set_turn("!a", "$t", Turn("again", "first?", "answered", 2.0))
    assert await store.turn("!a", "$t") == Turn("again", "first?", "answered", 2.0)
    assert await store.turn("!a", "$other") is None


async def test_lines_are_kept_once_and_stay_behind_their_windows_mark(open_database):
    store = await SqlMemoryStore.open(await open_database())
    for n in range(3):
        await store.add_line("!a", RoomLine(f"$l{n}", "@ann:x", f"line {n}", float(n), f"link{n}"))
    await store.add_line("!a", RoomLine("$l0", "@ann:x", "line 0", 0.0, "link0"))  # seen twice
    lines = await store.lines_from("!a", 0)
    assert [line.text for line in lines] == ["line 0", "line 1", "line 2"]
    assert await store.rooms_with_lines() == ["!a"]
    window = HistoryWindow(
        "w1", "!a", lines[0].seq, 0.0, 1.0, "line 0\nline 1", "link0", lines[1].seq
    )
    await store.add_windows("!a", [window], next_start=lines[2].seq, carried=1)
    assert await store.window_mark("!a") == (lines[2].seq, 1)
    assert [line.text for line in await store.lines_from("!a", lines[2].seq)] == ["line 2"]
    assert len(await store.lines_between("!a", lines[0].seq, lines[1].seq)) == 2, (
        "a window's lines stay, so that it can be rebuilt"
    )
    assert await store.has_windows("!a") and not await store.has_windows("!b")
    assert await store.windows("!a", ["w1", "w2"]) == {"w1": window}
    assert await store.windows("!b", ["w1"]) == {}, "a window belongs to its room"
    assert await store.windows("!a", []) == {}, "no window near enough"


async def test_an_edit_or_a_redaction_changes_a_line_and_finds_its_windows(open_database):
    store = await SqlMemoryStore.open(await open_database())
    for n in range(3):
        await store.add_line("!a", RoomLine(f"$l{n}", "@ann:x", f"line {n}", float(n), f"link{n}"))
    first, second, third = [line.seq for line in await store.lines_from("!a", 0)]
    windows = [
        HistoryWindow("w1", "!a", first, 0.0, 1.0, "t", "link0", second),
        HistoryWindow("w2", "!a", second, 1.0, 2.0, "t", "link1", third),
    ]
    await store.add_windows("!a", windows, next_start=third + 1, carried=0)

    assert await store.change_line("!a", "$l1", "edited", "@bob:x") is None, "not bob's"
    assert await store.change_line("!a", "$l1", "line 1, edited", "@ann:x", "$ed1") == second
    assert [w.id for w in await store.windows_with("!a", second)] == ["w1", "w2"]
    assert [w.id for w in await store.windows_with("!a", first)] == ["w1"]
    assert await store.change_line("!a", "$l0", None) == first, "a redaction by anyone"
    assert [line.text for line in await store.lines_between("!a", first, second)] == [
        "line 1, edited"
    ]
    assert await store.change_line("!a", "$gone", None) is None
    assert await store.change_line("!a", "$ed1", None) == second, "the edit redacted"
    assert await store.lines_between("!a", first, third) == [
        line for line in await store.lines_between("!a", third, third)
    ]

    await store.put_window(HistoryWindow("w1", "!a", first, 1.0, 1.0, "new", "link1", second))
    await store.drop_window("!a", "w2")
    assert {w.id: w.text for w in (await store.windows("!a", ["w1", "w2"])).values()} == {
        "w1": "new"
    }


async def test_memories_made_from_a_redacted_message_are_forgotten(open_database):
    store = await SqlMemoryStore.open(await open_database())
    await store.add_memory("!a", "", "the wifi is Guest-5", "@ann:x", 10, event_id="$m1")
    await store.add_memory("!a", "", "lunch at noon", "@ann:x", 10, event_id="$m2")
    assert await store.forget_event("!b", "$m1") == 0, "only in its room"
    assert await store.forget_event("!a", "$m1") == 1
    assert [m.text for m in await store.memories("!a", "@ann:x")] == ["lunch at noon"]


async def test_a_rooms_retention_drops_its_old_lines_and_windows(open_database):
    store = await SqlMemoryStore.open(await open_database())
    for n in range(4):
        await store.add_line("!a", RoomLine(f"$l{n}", "@ann:x", f"line {n}", float(n), f"link{n}"))
    await store.add_line("!b", RoomLine("$b0", "@ann:x", "other room", 0.0, "linkb"))
    seqs = [line.seq for line in await store.lines_from("!a", 0)]
    windows = [
        HistoryWindow("w1", "!a", seqs[0], 0.0, 1.0, "t", "l", seqs[1]),
        HistoryWindow("w2", "!a", seqs[2], 2.0, 3.0, "t", "l", seqs[3]),
    ]
    await store.add_windows("!a", windows, next_start=seqs[3] + 1, carried=0)
    assert await store.purge_before("!a", 2.0) == ["w1"]
    assert [line.text for line in await store.lines_from("!a", 0)] == ["line 2", "line 3"]
    assert list(await store.windows("!a", ["w1", "w2"])) == ["w2"]
    assert [line.text for line in await store.lines_from("!b", 0)] == ["other room"]


async def test_windows_of_an_earlier_release_that_span_a_redacted_message_go(open_database):
    store = await SqlMemoryStore.open(await open_database())
    legacy = [
        HistoryWindow("old1", "!a", 1, 10.0, 20.0, "t", "l"),
        HistoryWindow("old2", "!a", 5, 30.0, 40.0, "t", "l"),
    ]
    await store.add_windows("!a", legacy, next_start=9, carried=0)
    assert await store.drop_legacy_windows("!a", 15.0) == ["old1"]
    assert await store.drop_legacy_windows("!b", 35.0) == [], "a room's own"
    assert list(await store.windows("!a", ["old1", "old2"])) == ["old2"]


async def test_a_redacted_question_takes_its_turns_along_and_retention_drops_old_ones(
    open_database,
):
    store = await SqlMemoryStore.open(await open_database())
    asked = Turn("the Quokka plan?", "the Quokka plan?", "answered", 5.0, "$q")
    await store.set_turn("!a", "$q", asked)  # the thread the answer opens
    await store.set_turn("!a", "!a", asked)  # the room's conversation
    await store.set_turn("!a", "$other", Turn("older", "older", "answered", 1.0, "$o"))
    await store.set_turn("!a", "$legacy", Turn("earlier release", "", "answered", 9.0))
    assert await store.forget_turns_of("!b", "$q") == 0, "never across rooms"
    assert await store.forget_turns_of("!a", "$q") == 2
    assert await store.turn("!a", "$q") is None and await store.turn("!a", "!a") is None
    assert await store.forget_turns_of("!a", "$legacy") == 1, "no event kept: by its thread"
    assert await store.purge_turns_before("!a", 2.0) == 1
    assert await store.turn("!a", "$other") is None
