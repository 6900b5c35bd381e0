"""The durable inbox: a message is answered once, even across crashes and restarts."""

from __future__ import annotations

import json
import sqlite3

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


def test_the_reply_of_a_pending_message_is_kept_with_it_across_a_restart(tmp_path):
    store = StateStore(tmp_path / "state.sqlite3")
    store.store_batch("t1", [event("$asked"), event("$other")])
    store.record_reply("$asked", "$placeholder")
    store.close()

    reopened = StateStore(tmp_path / "state.sqlite3")
    replies = {e.source["event_id"]: e.reply_event_id for e in reopened.pending_events()}
    assert replies == {"$asked": "$placeholder", "$other": None}

    reopened.record_reply("$asked", None)  # taken back: the next reply is a new message
    reopened.record_reply("$other", "$answer")
    replies = {e.source["event_id"]: e.reply_event_id for e in reopened.pending_events()}
    assert replies == {"$asked": None, "$other": "$answer"}
    reopened.mark_done("$other")
    assert [e.source["event_id"] for e in reopened.pending_events()] == ["$asked"]


def test_a_state_file_from_before_replies_were_kept_is_upgraded_in_place(tmp_path):
    path = tmp_path / "state.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE inbox (event_id TEXT PRIMARY KEY, room_id TEXT NOT NULL, source TEXT,
                            done INTEGER NOT NULL DEFAULT 0, received_ms INTEGER NOT NULL);
        INSERT INTO meta VALUES ('sync_token', 'old-token');
        """
    )
    old.execute(
        "INSERT INTO inbox (event_id, room_id, source, received_ms) VALUES (?, ?, ?, 1)",
        ("$waiting", "!room", json.dumps(event("$waiting").source)),
    )
    old.commit()
    old.close()

    store = StateStore(path)
    assert store.sync_token() == "old-token"
    assert store.pending_events() == [event("$waiting")]
    store.record_reply("$waiting", "$placeholder")
    store.close()

    again = StateStore(path)  # opening an upgraded file leaves it as it is
    assert [e.reply_event_id for e in again.pending_events()] == ["$placeholder"]
