"""Decisions stored by an earlier release (a `RunCommand` of the release before) are
decided again once, before the workers take the first event, and carried out as this
release decides them."""

from __future__ import annotations

import time

from bot.inbox.decisions import ListMemories, decode_decision
from bot.inbox.state import PendingEvent, SqlStateStore
from bot.inbox.upgrade import redecide_stored
from bot.matrix.fake import FakeAccount
from core import strings
from core.ids import EventID
from core.storage.sqlite import SqliteDatabase
from tests.bot.harness import BOT, running_bot

ANN = "@ann:fake.test"
OLD_RELEASE = {"kind": "RunCommand", "name": "memory", "args": "", "thread_root": "$old"}


def _message(event_id: str, body: str) -> dict:
    return {
        "type": "m.room.message",
        "event_id": event_id,
        "sender": ANN,
        "room_id": "!r",
        "origin_server_ts": int(time.time() * 1000),
        "content": {"msgtype": "m.text", "body": body},
    }


async def _store_as_the_earlier_release(path) -> None:
    db = await SqliteDatabase.open(path)
    try:
        state = await SqlStateStore.open(db)
        stored = PendingEvent("!r", _message("$old", "!memory"), decision=OLD_RELEASE)
        await state.store_batch("s1", [stored])
    finally:
        await db.close()


async def test_an_earlier_releases_decision_is_decided_again_once(tmp_path):
    await _store_as_the_earlier_release(tmp_path / "state.sqlite3")
    db = await SqliteDatabase.open(tmp_path / "state.sqlite3")
    routed: list[str] = []

    async def route(event: PendingEvent):
        routed.append(str(event.source["event_id"]))
        return None, ListMemories(EventID("$old"))

    try:
        state = await SqlStateStore.open(db)
        assert await redecide_stored(state, route) == 1
        [pending] = await state.pending_events()
        assert decode_decision(pending.decision or {}) == ListMemories(EventID("$old"))
        # Once: what this release stored is read as it is.
        assert await redecide_stored(state, route) == 0
        assert routed == ["$old"]
    finally:
        await db.close()


async def test_the_command_an_earlier_release_stored_is_answered_after_the_upgrade(tmp_path):
    await _store_as_the_earlier_release(tmp_path / "state.sqlite3")
    account = FakeAccount(BOT)
    account.add_room("!r", [ANN])
    async with running_bot(tmp_path, account=account, rooms=True) as bot:
        reply = await bot.reply_to("$old")
        assert reply.content["body"] == strings.MEMORY_EMPTY
