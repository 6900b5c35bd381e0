"""The memory store on both backends: memories stay in their room and within the limit,
turns are replaced, history lines are kept once and leave when their window is stored."""

from __future__ import annotations

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


async def test_lines_are_kept_once_and_leave_when_their_window_is_stored(open_database):
    store = await SqlMemoryStore.open(await open_database())
    for n in range(3):
        await store.add_line("!a", f"$l{n}", "@ann:x", f"line {n}", float(n), f"link{n}")
    await store.add_line("!a", "$l0", "@ann:x", "line 0", 0.0, "link0")  # seen twice
    lines = await store.lines_from("!a", 0)
    assert [line.text for line in lines] == ["line 0", "line 1", "line 2"]
    assert await store.rooms_with_lines() == ["!a"]
    window = HistoryWindow("w1", "!a", lines[0].seq, 0.0, 1.0, "line 0\nline 1", "link0")
    await store.add_windows("!a", [window], next_start=lines[2].seq, carried=1)
    assert await store.window_mark("!a") == (lines[2].seq, 1)
    assert [line.text for line in await store.lines_from("!a", 0)] == ["line 2"]
    assert await store.has_windows("!a") and not await store.has_windows("!b")
    assert await store.windows("!a", ["w1", "w2"]) == {"w1": window}
    assert await store.windows("!b", ["w1"]) == {}, "a window belongs to its room"
    assert await store.windows("!a", []) == {}, "no window near enough"
