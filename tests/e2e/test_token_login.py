"""A homeserver without password login (as behind the Matrix Authentication Service):
the bot runs on an access token from a file, and a replaced token for the same device is
taken while it runs, keeping the device and its room keys (issue 46)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest

from bot.dev.synapse import Homeserver, ensure_synapse_venv, start_homeserver
from bot.matrix.types import MatrixError
from core import strings
from tests.e2e.conftest import PASSWORD, ROOT, BotHarness, unique
from tests.e2e.people import Person, bring_in, from_user, membership_of
from tests.e2e.scripted import ask

pytestmark = pytest.mark.e2e

# Password login off; a logged-in device may mint a login token for itself (MSC3882),
# which is how this test gets a second token for the same device, as an admin renews a
# compatibility token with `mas-cli manage issue-compatibility-token USER DEVICE`.
NO_PASSWORDS = {
    "password_config": {"enabled": False},
    "login_via_existing_session": {"enabled": True, "require_ui_auth": False},
}


@pytest.fixture(scope="module")
def passwordless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Homeserver]:
    python = ensure_synapse_venv(ROOT / ".venv-synapse")
    server = start_homeserver(tmp_path_factory.mktemp("no-passwords"), python, None, NO_PASSWORDS)
    yield server
    server.stop()


async def token_for_device(homeserver: str, token: str, device_id: str | None) -> dict:
    """A new access token of the account whose `token` is given: for `device_id` (the
    same device), or for a new device when None."""
    return await log_in_with(homeserver, await login_token(homeserver, token), device_id)


async def login_token(homeserver: str, token: str) -> str:
    """A short-lived login token minted by a logged-in device (MSC3882)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{homeserver}/_matrix/client/v1/login/get_token", json={}, headers=headers
        ) as response:
            assert response.status == 200, await response.text()
            return str((await response.json())["login_token"])


async def log_in_with(homeserver: str, minted: str, device_id: str | None) -> dict:
    """An access token from a login token: for `device_id`, or a new device when None."""
    async with aiohttp.ClientSession() as http:
        body: dict = {"type": "m.login.token", "token": minted}
        if device_id:
            body["device_id"] = device_id
        async with http.post(f"{homeserver}/_matrix/client/v3/login", json=body) as response:
            assert response.status == 200, await response.text()
            return dict(await response.json())


async def admin_login(homeserver: str, admin_token: str, user_id: str) -> str:
    """An access token for `user_id` from Synapse's admin login API (it makes no device)."""
    headers = {"Authorization": f"Bearer {admin_token}"}
    url = f"{homeserver}/_synapse/admin/v1/users/{quote(user_id)}/login"
    async with aiohttp.ClientSession() as http, http.post(url, json={}, headers=headers) as done:
        assert done.status == 200, await done.text()
        return str((await done.json())["access_token"])


async def start_on_token_file(
    bot: BotHarness, session: dict, alice: Person, *others: Person
) -> tuple[Path, str, str]:
    """The bot started on `session`'s token from a file, with Alice's encrypted admin
    room, answering Alice in an encrypted room: (the token file, admin room, room)."""
    token_file = bot.folder / "access-token"
    token_file.write_text(session["access_token"] + "\n")
    bot.credential = f'access_token_file = "{token_file}"'
    admin_room = await alice.create_room([bot.user_id], encrypted=True)
    allowed = [alice.user_id, *(other.user_id for other in others)]
    bot.write_config(allowed_users=allowed, admin_room=admin_room)
    await bot.start()
    room = await alice.create_room([bot.user_id], encrypted=True)
    await alice.wait_for(room, membership_of(bot.user_id, "join"))
    first = await ask(alice, room, "hello bot, are you there?", bot)
    assert first["body"]
    return token_file, admin_room, room


async def test_a_bot_without_password_login_runs_on_a_token_file_and_takes_a_new_one(
    passwordless: Homeserver, tmp_path: Path, storage_toml: str
):
    # Alice administers the homeserver too (for its admin login API, below).
    alice_session = passwordless.register_session(unique("alice"), PASSWORD, admin=True)
    alice = await Person.with_session(passwordless.url, alice_session, tmp_path / "alice")
    session = passwordless.register_session(unique("bot"), PASSWORD)
    bot = BotHarness(passwordless, tmp_path / "bot", storage_toml, user_id=session["user_id"])
    bot.folder.mkdir()
    try:
        # With a password, the start fails with one line that says what to do instead.
        bot.write_config(allowed_users=[alice.user_id])
        with pytest.raises(MatrixError, match="does not offer password login") as refused:
            await bot.start()
        assert "matrix.access_token_file" in str(refused.value)

        token_file, admin_room, room = await start_on_token_file(bot, session, alice)

        # The token is renewed for the same device while the bot runs.
        renewed = await token_for_device(
            passwordless.url, session["access_token"], session["device_id"]
        )
        assert renewed["device_id"] == session["device_id"]
        token_file.write_text(renewed["access_token"] + "\n")
        await alice.wait_for(
            admin_room, lambda e: e["content"].get("body") == strings.TOKEN_TAKEN, timeout=60
        )
        saved = json.loads((bot.folder / "data" / "session.json").read_text())
        assert saved["device_id"] == session["device_id"], "no new device"
        assert saved["access_token"] == renewed["access_token"]
        # A message after the swap is decrypted and answered: the room keys were kept.
        after = await ask(alice, room, "hello again, still there?", bot)
        assert after["body"] and alice.decrypted, "answered in the encrypted room"

        # A token of no device of its own (Synapse's admin login API) is refused with
        # why; the bot keeps the one it has.
        other = await admin_login(passwordless.url, alice_session["access_token"], bot.user_id)
        token_file.write_text(other + "\n")
        refusal = await alice.wait_for(
            admin_room,
            lambda e: (
                from_user(bot.user_id)(e)
                and e["content"].get("body", "").startswith(strings.TOKEN_NOT_TAKEN.split("{")[0])
            ),
            timeout=60,
        )
        assert session["device_id"] in refusal["content"]["body"]
        last = await ask(alice, room, "and now?", bot)
        assert last["body"]
    finally:
        await bot.stop()
        await alice.close()


async def log_out(homeserver: str, token: str) -> None:
    """`/logout`: the homeserver deletes the token's device and its encryption keys."""
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession() as http:
        url = f"{homeserver}/_matrix/client/v3/logout"
        async with http.post(url, json={}, headers=headers) as response:
            assert response.status == 200, await response.text()


async def listed_device_keys(homeserver: str, token: str, user_id: str, device_id: str) -> dict:
    """The keys the homeserver lists for one device, as any client reads them."""
    headers = {"Authorization": f"Bearer {token}"}
    body = {"device_keys": {user_id: [device_id]}}
    async with aiohttp.ClientSession() as http:
        url = f"{homeserver}/_matrix/client/v3/keys/query"
        async with http.post(url, json=body, headers=headers) as response:
            assert response.status == 200, await response.text()
            found = (await response.json())["device_keys"].get(user_id, {})
            return dict(found.get(device_id, {}).get("keys", {}))


async def test_a_device_logged_out_and_issued_again_reads_encrypted_rooms_again(
    passwordless: Homeserver, tmp_path: Path, storage_toml: str
):
    alice_session = passwordless.register_session(unique("alice"), PASSWORD)
    alice = await Person.with_session(passwordless.url, alice_session, tmp_path / "alice")
    bob_session = passwordless.register_session(unique("bob"), PASSWORD)
    bob = await Person.with_session(passwordless.url, bob_session, tmp_path / "bob")
    session = passwordless.register_session(unique("bot"), PASSWORD)
    device = session["device_id"]
    bot = BotHarness(passwordless, tmp_path / "bot", storage_toml, user_id=session["user_id"])
    bot.folder.mkdir()
    try:
        token_file, admin_room, room = await start_on_token_file(bot, session, alice, bob)
        keys = await listed_device_keys(
            passwordless.url, alice_session["access_token"], bot.user_id, device
        )
        assert keys, "the bot published its device's keys"

        # The admin revokes the token by logging it out (the device and its keys go),
        # then issues a token for the same device id.
        minted = await login_token(passwordless.url, session["access_token"])
        await log_out(passwordless.url, session["access_token"])
        assert not await listed_device_keys(
            passwordless.url, alice_session["access_token"], bot.user_id, device
        )
        renewed = await log_in_with(passwordless.url, minted, device)
        assert renewed["device_id"] == device
        token_file.write_text(renewed["access_token"] + "\n")
        await alice.wait_for(
            admin_room, lambda e: e["content"].get("body") == strings.TOKEN_TAKEN, timeout=60
        )

        # The homeserver lists the same keys again, so people's clients encrypt for the
        # bot again: Bob, who joins now, is answered. (Alice's client, matrix-nio, keeps
        # a device it once saw deleted as deleted, and stays unable to reach it; Element's
        # takes it back.)
        for _ in range(120):
            found = await listed_device_keys(
                passwordless.url, alice_session["access_token"], bot.user_id, device
            )
            if found:
                break
            await asyncio.sleep(0.5)
        assert found == keys, "the same identity keys, published again"
        await bring_in(room, alice, bob)
        after = await ask(bob, room, "still there after the logout?", bot)
        assert after["body"] and bob.decrypted, "answered in the encrypted room"
    finally:
        await bot.stop()
        await alice.close()
        await bob.close()
