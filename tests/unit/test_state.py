"""The durable inbox: a message is answered once, even across crashes and restarts."""

from __future__ import annotations

from bot.state import PendingEvent, StateStore


def event(event_id: str) -> PendingEvent:
    return PendingEvent("!room", {"event_id": event_id, "type": "m.room.message", "content": {}})


def test_a_redelivered_event_is_not_fresh_and_unfinished_ones_survive_a_restart(tmp_path):
    store = StateStore(tmp_path / "state.sqlite3")
    first = store.store_batch("t1", [event("$a"), event("$b")])
    assert [e.source["event_id"] for e in first] == ["$a", "$b"]
    store.mark_done("$a")
    store.close()

    reopened = StateStore(tmp_path / "state.sqlite3")
    assert reopened.sync_token() == "t1"
    assert [e.source["event_id"] for e in reopened.pending_events()] == ["$b"]
    assert reopened.store_batch("t2", [event("$a"), event("$b"), event("$c")]) == [event("$c")]


def test_first_start_is_kept_and_threads_are_remembered(tmp_path):
    store = StateStore(tmp_path / "state.sqlite3")
    started = store.first_start_ms()
    store.record_bot_message("$answer", "!room", "$root")
    store.record_join("!dm", 42, True)
    store.close()

    reopened = StateStore(tmp_path / "state.sqlite3")
    assert reopened.first_start_ms() == started
    assert reopened.is_bot_message("$answer") and not reopened.is_bot_message("$other")
    assert reopened.bot_in_thread("!room", "$root") and not reopened.bot_in_thread(
        "!other", "$root"
    )
    assert reopened.joined_room("!dm") == (42, True)
    assert reopened.joined_room("!unknown") == (0, False)
