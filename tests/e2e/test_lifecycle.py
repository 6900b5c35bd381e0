"""Invites, restarts and config edits, as an admin and users would live them."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request

import pytest
from nio import AsyncClient, RoomSendResponse

from core import strings
from tests.e2e.conftest import ROOT
from tests.e2e.people import from_user, membership_of, replies_to, settle
from tests.e2e.test_conversation import room_with_bot

pytestmark = pytest.mark.e2e


async def test_messages_from_before_the_first_start_are_never_answered(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    room = await alice.create_room([bot.user_id])
    old = await alice.say(room, "are you there?", mentions=[bot.user_id])

    await bot.start()
    await alice.wait_for(room, membership_of(bot.user_id, "join"))
    new = await alice.say(room, "and now?", mentions=[bot.user_id])
    await alice.wait_for(room, replies_to(new))
    await settle(alice, room)
    assert alice.seen(room, replies_to(old)) == []


def bot_devices(bot) -> set[str]:
    session = json.loads((bot.folder / "data" / "session.json").read_text())
    request = urllib.request.Request(
        f"{bot.homeserver.url}/_matrix/client/v3/devices",
        headers={"Authorization": f"Bearer {session['access_token']}"},
    )
    with urllib.request.urlopen(request) as response:
        return {device["device_id"] for device in json.load(response)["devices"]}


async def test_a_restart_answers_what_came_in_while_down_and_nothing_twice(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)
    before = await alice.say(room, "first question", mentions=[bot.user_id])
    await alice.wait_for(room, replies_to(before))

    devices_before = bot_devices(bot)
    await bot.stop()
    while_down = await alice.say(room, "asked while you were away", mentions=[bot.user_id])
    await bot.start()

    await alice.wait_for(room, replies_to(while_down))
    after = await alice.say(room, "after the restart", mentions=[bot.user_id])
    await alice.wait_for(room, replies_to(after))
    await settle(alice, room)
    for question in (before, while_down, after):
        assert len(alice.seen(room, replies_to(question))) == 1
    assert bot_devices(bot) == devices_before, "the restart created a new device"


async def wait_for_config(bot, condition, timeout: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition(bot.app.settings.current):
        assert asyncio.get_running_loop().time() < deadline, "the valid edit was not applied"
        await asyncio.sleep(0.1)


async def test_config_edits_apply_live_and_broken_ones_are_reported(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    admin_room = await room_with_bot(alice, bot)
    room = await room_with_bot(alice, bot)
    bot.write_config(allowed_users=[alice.user_id], admin_room=admin_room)
    await wait_for_config(bot, lambda settings: settings.bot.admin_room == admin_room)

    bot.write_config(
        allowed_users=[alice.user_id], admin_room=admin_room, placeholder_after_seconds="soon"
    )
    report = await alice.wait_for(
        admin_room,
        lambda e: from_user(bot.user_id)(e) and e["content"]["body"] != strings.CONFIG_APPLIED,
        timeout=30,
    )
    assert "bot.placeholder_after_seconds" in report["content"]["body"]
    assert "previous config" in report["content"]["body"]
    still_running = await alice.say(room, "still there?", mentions=[bot.user_id])
    await alice.wait_for(room, replies_to(still_running))

    bot.write_config(
        f'[rooms."{room}"]\nanswer_without_mention = true',
        allowed_users=[alice.user_id],
        admin_room=admin_room,
    )
    await wait_for_config(bot, lambda settings: settings.room(room).answer_without_mention)
    plain = await alice.say(room, "no mention this time")
    await alice.wait_for(room, replies_to(plain))


async def test_python_dash_m_bot_runs_from_the_config_and_stops_on_sigterm(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "--config", str(bot.config_path)],
        cwd=ROOT,
        env={**os.environ, **bot.env},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        room = await alice.create_room([bot.user_id])
        await alice.wait_for(room, membership_of(bot.user_id, "join"), timeout=60)
        command = await alice.say(room, "!help")
        await alice.wait_for(room, replies_to(command))
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert bot.env["BOT_PASSWORD"] not in stderr


async def test_the_homeserver_gives_the_same_event_for_a_transaction_sent_again(people):
    """What the bot's replies rely on after a crash between sending and keeping the id
    (bot/inbox/reply.py): the same transaction id from the same session, even from a
    client made anew (a restarted bot reuses its session), is the same event."""
    alice = await people("alice")
    room = await alice.create_room([])
    content = {"msgtype": "m.notice", "body": "sent once"}
    first = await alice.client.room_send(room, "m.room.message", content, tx_id="reply-abc")
    again = AsyncClient(alice.client.homeserver, alice.user_id)
    again.restore_login(alice.user_id, alice.client.device_id, alice.client.access_token)
    try:
        second = await again.room_send(room, "m.room.message", content, tx_id="reply-abc")
    finally:
        await again.close()
    assert isinstance(first, RoomSendResponse) and isinstance(second, RoomSendResponse)
    assert second.event_id == first.event_id
    sentinel = await alice.say(room, "after")
    await alice.wait_for(room, lambda e: e.get("event_id") == sentinel)
    assert len(alice.seen(room, lambda e: e.get("content", {}).get("body") == "sent once")) == 1
