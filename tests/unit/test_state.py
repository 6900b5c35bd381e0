"""The durable inbox: a message is answered once, even across crashes and restarts; on
both store backends."""

from __future__ import annotations

from bot.state import PendingEvent, SqlStateStore


def event(event_id: str) -> PendingEvent:
    return PendingEvent("!room", {"event_id": event_id, "type": "m.room.message", "content": {}})


async def test_a_redelivered_event_is_not_fresh_and_unfinished_ones_survive_a_restart(
    open_database,
):
    store = await SqlStateStore.open(await open_database())
    first = await store.store_batch("t1", [event("$a"), event("$b")])
    assert [e.source["event_id"] for e in first] == ["$a", "$b"]
    await store.mark_done("$a")

    reopened = await SqlStateStore.open(await open_database())
    assert await reopened.sync_token() == "t1"
    assert [e.source["event_id"] for e in await reopened.pending_events()] == ["$b"]
    fresh = await reopened.store_batch("t2", [event("$a"), event("$b"), event("$c")])
    assert fresh == [event("$c")]
    assert await reopened.sync_token() == "t2"


async def test_first_start_is_kept_and_threads_are_remembered(open_database):
    store = await SqlStateStore.open(await open_database())
    started = await store.first_start_ms()
    await store.record_bot_message("$answer", "!room", "$root")
    await store.record_join("!dm", 42, True)
    await store.record_join("!dm", 99, False)  # a second join does not move the cut-off

    reopened = await SqlStateStore.open(await open_database())
    assert await reopened.first_start_ms() == started
    assert await reopened.is_bot_message("$answer")
    assert not await reopened.is_bot_message("$other")
    assert await reopened.thread_of("$answer") == "$root"
    assert await reopened.bot_in_thread("!room", "$root")
    assert not await reopened.bot_in_thread("!other", "$root")
    assert await reopened.joined_room("!dm") == (42, True)
    assert await reopened.joined_room("!unknown") == (0, False)


async def test_an_invite_earlier_than_the_join_becomes_the_cut_off(open_database):
    store = await SqlStateStore.open(await open_database())
    await store.record_join("!dm", 5_000, True)
    await store.note_invited("!dm", 4_000)
    await store.note_invited("!dm", 4_500)  # a later one does not move it back
    assert await store.joined_room("!dm") == (4_000, True)


async def test_the_reply_of_a_pending_message_is_kept_with_it_across_a_restart(open_database):
    store = await SqlStateStore.open(await open_database())
    await store.store_batch("t1", [event("$asked"), event("$other")])
    await store.record_reply("$asked", "$placeholder")

    reopened = await SqlStateStore.open(await open_database())
    replies = {e.source["event_id"]: e.reply_event_id for e in await reopened.pending_events()}
    assert replies == {"$asked": "$placeholder", "$other": None}
    assert await reopened.was_received("$asked") and not await reopened.was_received("$nope")

    await reopened.record_reply("$asked", None)  # taken back: the next reply is a new message
    await reopened.record_reply("$other", "$answer")
    replies = {e.source["event_id"]: e.reply_event_id for e in await reopened.pending_events()}
    assert replies == {"$asked": None, "$other": "$answer"}
    await reopened.mark_done("$other")
    assert [e.source["event_id"] for e in await reopened.pending_events()] == ["$asked"]
    assert await reopened.was_received("$other"), "answered messages are still known"
