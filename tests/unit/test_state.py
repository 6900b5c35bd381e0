"""The durable inbox: a message is answered once, even across crashes and restarts; on
both store backends."""

from __future__ import annotations

import pytest

from bot.inbox.state import Lease, LeaseLost, PendingEvent, SqlStateStore, now_ms


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
    assert [(e.source["event_id"], e.arrival) for e in fresh] == [("$c", 3)]
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


async def test_decisions_are_kept_and_pending_messages_come_in_order_of_arrival(open_database):
    store = await SqlStateStore.open(await open_database())
    asked = PendingEvent("!room", {"event_id": "$q", "type": "m.room.message"}, None, {"do": "x"})
    await store.store_batch("t1", [asked, event("$later")])
    await store.store_batch("t2", [event("$last")])
    pending = await store.pending_events()
    assert [(e.source["event_id"], e.arrival, e.decision) for e in pending] == [
        ("$q", 1, {"do": "x"}),
        ("$later", 2, None),
        ("$last", 3, None),
    ]
    assert [e.arrival for e in await store.pending_events(after=1, limit=1)] == [2]


async def test_one_holder_of_a_lease_at_a_time_and_a_lost_lease_stores_nothing(open_database):
    first = await SqlStateStore.open(await open_database())
    second = await SqlStateStore.open(await open_database())
    mine, theirs = Lease("@bot:hs", "process-1"), Lease("@bot:hs", "process-2")
    assert await first.take_lease(mine, 30)
    assert not await second.take_lease(theirs, 30), "held by the first"
    assert await first.take_lease(mine, 30), "renewed by its holder"
    assert await first.store_batch("t1", [event("$a")], mine)
    with pytest.raises(LeaseLost):
        await second.store_batch("t2", [event("$b")], theirs)
    assert await first.sync_token() == "t1"

    await first.release_lease(mine)  # a clean stop: the standby need not wait
    assert await second.take_lease(theirs, 0.001)
    with pytest.raises(LeaseLost):
        await first.store_batch("t3", [event("$c")], mine)
    assert [e.source["event_id"] for e in await first.pending_events()] == ["$a"]
    first.clock = lambda: now_ms() + 1_000  # the second's lease has run out: anyone may take it
    assert await first.take_lease(mine, 30)


async def test_answered_messages_keep_no_text_and_leave_after_the_edit_window(open_database):
    store = await SqlStateStore.open(await open_database())
    secret = PendingEvent(
        "!room",
        {"event_id": "$q", "content": {"body": "the Quokka plan?"}},
        decision={"kind": "AnswerQuestion", "text": "the Quokka plan?", "thread_root": "$q"},
    )
    await store.store_batch("t1", [secret, event("$redacted")])
    await store.mark_done("$q")
    rows = await store.db.fetch("SELECT source, decision FROM inbox WHERE event_id = '$q'")
    assert rows == [(None, None)]
    assert await store.was_received("$q"), "its id serves the edit window"
    await store.forget_message("!elsewhere", "$redacted")
    assert await store.pending_events(), "a redaction in another room is none of this message"
    await store.forget_message("!room", "$redacted")
    assert await store.pending_events() == [], "a redacted message is not answered"
    assert await store.was_redacted("$redacted") and not await store.was_redacted("$q")
    assert await store.purge_done(now_ms() - 60_000) == 0, "within the window"
    assert await store.purge_done(now_ms() + 1) == 1, "all but the newest"
    assert not await store.was_received("$q")
    [later] = await store.store_batch("t2", [event("$later")])
    assert later.arrival == 3, "numbered on: a feeder that saw 2 asks for what is after it"


async def test_the_kind_of_a_pending_event_is_known_in_its_room_until_it_is_done(open_database):
    store = await SqlStateStore.open(await open_database())
    shared = PendingEvent(
        "!room",
        {"event_id": "$f", "type": "m.room.message"},
        None,
        {"kind": "KeepFile", "name": "notes.pdf"},
    )
    await store.store_batch("t1", [shared, event("$q")])
    assert await store.pending_kind("!room", "$f") == "KeepFile"
    assert await store.pending_kind("!other", "$f") is None, "another room's event"
    assert await store.pending_kind("!room", "$q") is None, "stored without a decision"
    await store.mark_done("$f")
    assert await store.pending_kind("!room", "$f") is None
