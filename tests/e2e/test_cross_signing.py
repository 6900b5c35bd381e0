"""The bot's device is cross-signed, so Element shows its answers as verified: checked as
any client checks it, from the keys the homeserver publishes for the bot's account."""

from __future__ import annotations

import asyncio
import json
import stat
from typing import Any

import aiohttp
import pytest

from bot.matrix.cross_signing import KEY_FILE
from tests.e2e.people import Person, replies_to
from tests.e2e.test_conversation import room_with_bot
from tests.support.signatures import is_cross_signed, verify

pytestmark = pytest.mark.e2e


async def published_keys(person: Person, user_id: str) -> dict[str, Any]:
    client = person.client
    async with aiohttp.ClientSession() as http:
        response = await http.post(
            f"{client.homeserver}/_matrix/client/v3/keys/query",
            json={"device_keys": {user_id: []}},
            headers={"Authorization": f"Bearer {client.access_token}"},
        )
        return await response.json()


def only_key(key_object: dict[str, Any]) -> str:
    [key] = key_object["keys"].values()
    return key


async def wait_until_signed(person: Person, user_id: str, device_id: str) -> dict[str, Any]:
    """The published keys once the device carries a signature of the self-signing key."""
    keys: dict[str, Any] = {}

    async def fetch() -> None:
        keys.update(await published_keys(person, user_id))

    def signed() -> bool:
        ssk = keys.get("self_signing_keys", {}).get(user_id)
        device = keys.get("device_keys", {}).get(user_id, {}).get(device_id, {})
        return bool(ssk) and f"ed25519:{only_key(ssk)}" in device.get("signatures", {}).get(
            user_id, {}
        )

    for _ in range(60):
        await fetch()
        if signed():
            return keys
        await asyncio.sleep(0.5)
    raise AssertionError(f"device {device_id} was not cross-signed: {json.dumps(keys)[:2000]}")


def assert_chain(keys: dict[str, Any], user_id: str, device_id: str) -> str:
    """master -> self-signing key -> device; returns the master key."""
    master = only_key(keys["master_keys"][user_id])
    ssk = keys["self_signing_keys"][user_id]
    verify(ssk, user_id, master)
    verify(keys["device_keys"][user_id][device_id], user_id, only_key(ssk))
    assert keys["master_keys"][user_id]["usage"] == ["master"]
    return master


def session_of(bot) -> dict[str, str]:
    return json.loads((bot.folder / "data" / "session.json").read_text())


async def test_the_bots_device_is_cross_signed_and_a_new_device_is_signed_too(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    device = session_of(bot)["device_id"]
    keys = await wait_until_signed(alice, bot.user_id, device)
    master = assert_chain(keys, bot.user_id, device)
    key_file = bot.folder / "data" / KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert master not in key_file.read_text(), "the file holds private keys, not public ones"

    await bot.stop()
    (bot.folder / "data" / "session.json").unlink()  # the session is lost: a new device
    await bot.start()
    new_device = session_of(bot)["device_id"]
    assert new_device != device
    keys = await wait_until_signed(alice, bot.user_id, new_device)
    assert assert_chain(keys, bot.user_id, new_device) == master, "the same identity"


async def test_a_lost_data_folder_publishes_new_keys_with_the_accounts_password(people, bot):
    """Replacing published keys takes user-interactive auth: the bot gives its password."""
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    first = assert_chain(
        await wait_until_signed(alice, bot.user_id, session_of(bot)["device_id"]),
        bot.user_id,
        session_of(bot)["device_id"],
    )
    await bot.stop()
    for name in ("session.json", KEY_FILE):
        (bot.folder / "data" / name).unlink()
    await bot.start()
    device = session_of(bot)["device_id"]
    second = assert_chain(await wait_until_signed(alice, bot.user_id, device), bot.user_id, device)
    assert second != first


async def test_a_client_that_shares_keys_only_with_cross_signed_devices_gets_answers(people, bot):
    """Alice's client plays Element's "exclude insecure devices": it shares the room key
    only with devices whose owner cross-signed them, and blacklists the rest."""
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    await wait_until_signed(alice, bot.user_id, session_of(bot)["device_id"])
    room = await room_with_bot(alice, bot, encrypted=True)

    client = alice.client
    bot_device = session_of(bot)["device_id"]
    # Alice's client learns the bot's devices as it syncs (it shares a room with the bot).
    await alice.wait_until(
        lambda: any(
            d.device_id == bot_device for d in client.device_store.active_user_devices(bot.user_id)
        )
    )
    trusted = []
    for user_id in (alice.user_id, bot.user_id):
        keys = await published_keys(alice, user_id)
        for device in client.device_store.active_user_devices(user_id):
            if device.device_id == client.device_id:
                continue
            if is_cross_signed(keys, user_id, device.device_id):
                client.verify_device(device)
                trusted.append(device.device_id)
            else:
                client.blacklist_device(device)
    assert trusted == [bot_device], "the bot's device, and only it"
    response = await client.room_send(
        room,
        "m.room.message",
        {
            "msgtype": "m.text",
            "body": "where is the onboarding guide?",
            "m.mentions": {"user_ids": [bot.user_id]},
        },
        ignore_unverified_devices=False,
    )
    answer = await alice.wait_for(room, replies_to(response.event_id))
    assert answer["event_id"] in alice.decrypted
    assert "onboarding guide" in answer["content"]["body"], "the bot could read the question"
