"""The bot's device is cross-signed, so Element shows its answers as verified: checked as
any client checks it, from the keys the homeserver publishes for the bot's account."""

from __future__ import annotations

import asyncio
import json
import stat
from typing import Any

import aiohttp
import pytest

from bot.cross_signing import KEY_FILE
from tests.e2e.people import Person
from tests.support.signatures import verify

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
