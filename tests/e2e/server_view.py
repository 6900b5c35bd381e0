"""What the homeserver itself stores, read as its operator would: Synapse's admin API
with an admin account of the test's own. The proof that an encrypted room's text never
reaches the server in plaintext."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import quote

import aiohttp

from bot.dev.synapse import Homeserver

PASSWORD = "operator password of the tests"


class ServerView:
    def __init__(self, homeserver: Homeserver, token: str) -> None:
        self.homeserver = homeserver
        self.token = token

    @classmethod
    async def open(cls, homeserver: Homeserver) -> ServerView:
        localpart = f"operator-{uuid.uuid4().hex[:8]}"
        user_id = homeserver.register(localpart, PASSWORD, admin=True)
        body = {
            "type": "m.login.password",
            "password": PASSWORD,
            "identifier": {"type": "m.id.user", "user": user_id},
        }
        async with aiohttp.ClientSession() as http:
            url = f"{homeserver.url}/_matrix/client/v3/login"
            async with http.post(url, json=body) as response:
                assert response.status == 200, await response.text()
                return cls(homeserver, (await response.json())["access_token"])

    async def _get(self, path: str) -> Any:
        headers = {"Authorization": f"Bearer {self.token}"}
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{self.homeserver.url}{path}", headers=headers) as response:
                assert response.status == 200, await response.text()
                return await response.json()

    async def messages(self, room_id: str) -> list[dict[str, Any]]:
        """Every event of the room's timeline as the server stores it."""
        room = quote(room_id, safe="")
        found = await self._get(f"/_synapse/admin/v1/rooms/{room}/messages?dir=b&limit=1000")
        return list(found["chunk"])

    async def state(self, room_id: str) -> list[dict[str, Any]]:
        room = quote(room_id, safe="")
        return list((await self._get(f"/_synapse/admin/v1/rooms/{room}/state"))["state"])

    async def holding(self, room_id: str, text: str) -> list[str]:
        """What the server holds in plaintext in the room with `text` in it (empty: none),
        so that a failing check shows it: what its events and state say (their content,
        and what the server bundles with them). Not the numbers around them: four digits
        of a secret turn up by chance in timestamps and ages (a run failed on '4417'
        while no message it read held it)."""
        events = [*await self.messages(room_id), *await self.state(room_id)]
        return [
            said
            for event in events
            for said in strings_in([event.get("content"), event.get("unsigned")])
            if text in said
        ]


def strings_in(value: Any) -> list[str]:
    """Every string within a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [found for item in value for found in strings_in(item)]
    return []
