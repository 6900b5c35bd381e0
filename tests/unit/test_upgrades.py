"""Rooms follow their upgrades (bot/features/upgrades): the tombstones a sync shows, the
chain of rooms a room replaced, and the settings that follow a room into its successor."""

from __future__ import annotations

from pathlib import Path

from bot.features.upgrades.follower import Tombstone, parse_tombstone, parse_tombstones
from bot.features.upgrades.store import decide_predecessors
from bot.matrix.types import JoinedRoomBatch, SyncBatch
from bot.settings_holder import SettingsHolder, build_linked_settings
from core.config import parse_config


def tombstone(new: object, state_key: str = "") -> dict:
    return {
        "type": "m.room.tombstone",
        "state_key": state_key,
        "sender": "@admin:hs",
        "content": {"body": "moved", "replacement_room": new},
    }


def test_the_tombstones_of_a_sync_are_read_and_broken_ones_left():
    batch = SyncBatch(
        "s1",
        [
            JoinedRoomBatch("!old:hs", state=[tombstone("!new:hs")]),
            JoinedRoomBatch("!b:hs", timeline=[tombstone(None), tombstone("!c:hs", "x")]),
            JoinedRoomBatch("!d:hs", timeline=[tombstone("!d:hs"), {"type": "m.room.message"}]),
        ],
    )
    assert parse_tombstones(batch) == [Tombstone("!old:hs", "!new:hs", "@admin:hs")]
    assert parse_tombstone("!a:hs", tombstone("#alias:hs")) is None


def test_the_rooms_a_room_replaced_newest_first_without_looping():
    successors = {"!v1": "!v2", "!v2": "!v3", "!x": "!y", "!loop1": "!loop2", "!loop2": "!loop1"}
    assert decide_predecessors("!v3", successors) == ("!v2", "!v1")
    assert decide_predecessors("!v1", successors) == ()
    assert decide_predecessors("!loop1", successors) == ("!loop2",)


def settings(rooms: str):
    return parse_config(
        '[matrix]\nhomeserver = "http://127.0.0.1:1"\nuser_id = "@bot:x"\npassword = "p"\n' + rooms,
        origin="bot.toml",
        env={},
        base_dir=Path("."),
    )


def test_an_upgraded_rooms_settings_follow_it_unless_the_successor_has_its_own():
    base = settings('[rooms."!v1"]\nlanguage = "de"\n[rooms."!own"]\nlanguage = "fr"\n')
    linked = build_linked_settings(base, {"!v1": "!v2", "!v2": "!v3", "!x": "!own"})
    assert linked.room("!v3").language == "de" and linked.room("!v2").language == "de"
    assert linked.room("!own").language == "fr", "the new room's own entry wins"
    assert build_linked_settings(base, {}) is base


def test_the_holder_keeps_the_links_across_a_config_edit():
    holder = SettingsHolder(settings('[rooms."!v1"]\nlanguage = "de"\n'))
    holder.link_rooms({"!v1": "!v2"})
    assert holder.current.room("!v2").language == "de"
    holder.current = settings('[rooms."!v1"]\nlanguage = "es"\n')
    assert holder.current.room("!v2").language == "es"


def test_the_rooms_replaced_lend_their_knowledge_only_where_it_may_go():
    from core.ids import RoomID, UserID
    from core.pipeline.sources import decide_own_rooms
    from core.requests import Request
    from core.rights.readers import Audience

    request = Request(
        "q?",
        UserID("@ann:hs"),
        RoomID("!v3"),
        None,
        knowledge=((RoomID("!v3"), 0.0), (RoomID("!v2"), 5.0), (RoomID("!v1"), 1.0)),
        predecessors=(RoomID("!v2"), RoomID("!v1"), RoomID("!v0")),
        plaintext_only=(RoomID("!v1"),),
    )
    audience = Audience((UserID("@ann:hs"),), request.knowledge, "room", request.plaintext_only)
    # !v1 was encrypted and this room is not: its text would reach the homeserver here;
    # !v0 is one its readers could not all read.
    assert decide_own_rooms(request, audience) == [("!v3", 0.0), ("!v2", 5.0)]


async def test_an_upgrade_is_followed_only_when_its_sender_may_invite_the_bot(
    open_database, tmp_path
):
    from bot.features.upgrades.follower import UpgradeFollower
    from bot.features.upgrades.store import SqlUpgradeStore
    from bot.matrix.fake import FakeAccount

    account = FakeAccount("@bot:hs")
    account.add_room("!old", ["@admin:hs", "@stranger:other"], encrypted=False)
    holder = SettingsHolder(settings('[invites]\nallowed_users = ["@admin:hs"]\n'))
    follower = UpgradeFollower(account, await SqlUpgradeStore.open(await open_database()), holder)
    await follower.follow(Tombstone("!old", "!elsewhere", "@stranger:other"))
    assert not follower.replaced("!old") and "!elsewhere" not in account.rooms()
    await follower.follow(Tombstone("!old", "!new", "@admin:hs"))
    assert follower.replaced("!old") and "!new" in account.rooms()
    assert follower.predecessors("!new") == ("!old",)
