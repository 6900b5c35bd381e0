"""Real Matrix users for the tests: matrix-nio clients that sync like a person's client."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nio import (
    AsyncClient,
    AsyncClientConfig,
    Event,
    JoinResponse,
    LoginResponse,
    RoomCreateResponse,
    RoomInviteResponse,
    RoomRedactResponse,
    RoomSendResponse,
    UploadResponse,
)

from tests.support.messages import build_text_content

Predicate = Callable[[dict[str, Any]], bool]


SYNC_MS = 10_000


@dataclass
class Person:
    """A logged-in user whose client keeps syncing and records every timeline event."""

    client: AsyncClient
    events: list[dict[str, Any]] = field(default_factory=list)
    decrypted: set[str] = field(default_factory=set)
    _sync: asyncio.Task | None = None

    @classmethod
    async def login(cls, homeserver: str, user_id: str, password: str, store: Path) -> Person:
        store.mkdir(parents=True, exist_ok=True)
        # Quick retries: a test that stops the homeserver waits for nobody's backoff.
        config = AsyncClientConfig(
            encryption_enabled=True, store_sync_tokens=False, max_timeout_retry_wait_time=1
        )
        client = AsyncClient(homeserver, user_id, store_path=str(store), config=config)
        response = await client.login(password, device_name="test-client")
        assert isinstance(response, LoginResponse), response
        return await cls._started(client)

    @classmethod
    async def with_session(cls, homeserver: str, session: dict, store: Path) -> Person:
        """A person on a device the homeserver logged in already (where password login
        is off): `session` has user_id, device_id and access_token."""
        store.mkdir(parents=True, exist_ok=True)
        config = AsyncClientConfig(
            encryption_enabled=True, store_sync_tokens=False, max_timeout_retry_wait_time=1
        )
        client = AsyncClient(homeserver, session["user_id"], store_path=str(store), config=config)
        client.restore_login(session["user_id"], session["device_id"], session["access_token"])
        return await cls._started(client)

    @classmethod
    async def _started(cls, client: AsyncClient) -> Person:
        person = cls(client)
        client.add_event_callback(person._record, Event)
        # A long poll, as clients do: the homeserver answers as soon as anything arrives,
        # and an idle client costs it one request every SYNC_MS, not every second.
        person._sync = asyncio.create_task(client.sync_forever(timeout=SYNC_MS, full_state=True))
        await client.synced.wait()
        return person

    async def _record(self, room: Any, event: Event) -> None:
        source = dict(event.source)
        source.setdefault("room_id", room.room_id)
        if getattr(event, "decrypted", False):
            self.decrypted.add(source.get("event_id", ""))
        self.events.append(source)

    @property
    def user_id(self) -> str:
        return self.client.user_id

    async def close(self) -> None:
        if self._sync:
            self._sync.cancel()
            await asyncio.gather(self._sync, return_exceptions=True)
        await self.client.close()

    async def create_room(
        self,
        invite: list[str],
        *,
        encrypted: bool = False,
        direct: bool = False,
        visibility: str | None = None,
    ) -> str:
        state = (
            [
                {
                    "type": "m.room.encryption",
                    "state_key": "",
                    "content": {"algorithm": "m.megolm.v1.aes-sha2"},
                }
            ]
            if encrypted
            else []
        )
        if visibility:
            state.append(
                {
                    "type": "m.room.history_visibility",
                    "state_key": "",
                    "content": {"history_visibility": visibility},
                }
            )
        response = await self.client.room_create(
            name="test room", invite=invite, initial_state=state, is_direct=direct
        )
        assert isinstance(response, RoomCreateResponse), response
        return response.room_id

    async def send(self, room_id: str, content: dict[str, Any]) -> str:
        if room_id not in self.client.rooms:
            await self.wait_until(lambda: room_id in self.client.rooms)
        if self.client.should_query_keys:
            await self.client.keys_query()
        response = await self.client.room_send(
            room_id, "m.room.message", content, ignore_unverified_devices=True
        )
        assert isinstance(response, RoomSendResponse), response
        return response.event_id

    async def say(
        self,
        room_id: str,
        body: str,
        *,
        mentions: list[str] | None = None,
        thread: str | None = None,
        reply_to: str | None = None,
        html: str | None = None,
        msgtype: str = "m.text",
    ) -> str:
        """Send a message like a client would; `mentions=None` leaves out `m.mentions`."""
        content = build_text_content(
            body, mentions=mentions, thread=thread, reply_to=reply_to, msgtype=msgtype
        )
        if html is not None:
            content.update(format="org.matrix.custom.html", formatted_body=html)
        return await self.send(room_id, content)

    async def share_file(
        self,
        room_id: str,
        data: bytes,
        name: str,
        mimetype: str,
        *,
        reply_to: str | None = None,
        voice: bool = False,
        claimed_size: int | None = None,
        msgtype: str = "m.file",
    ) -> str:
        """Upload a file as a client does (encrypted in an encrypted room, its key in the
        event) and share it as an `m.file` message, or with `voice` as a voice message
        (`m.audio` with MSC3245's flag, as Element sends them); `claimed_size` is the
        size the event says, as a buggy or hostile client may lie; `msgtype` "m.image"
        shares a picture as clients do."""
        encrypted = self.client.rooms[room_id].encrypted
        response, keys = await self.client.upload(
            io.BytesIO(data),
            content_type=mimetype,
            filename=name,
            encrypt=encrypted,
            filesize=len(data),
        )
        assert isinstance(response, UploadResponse), response
        content: dict[str, Any] = {
            "msgtype": msgtype,
            "body": name,
            "filename": name,
            "info": {"mimetype": mimetype, "size": claimed_size or len(data)},
        }
        if voice:
            content.update(msgtype="m.audio", body="Voice message")
            content["org.matrix.msc3245.voice"] = {}
        if encrypted:
            content["file"] = {**(keys or {}), "url": response.content_uri}
        else:
            content["url"] = response.content_uri
        if reply_to:
            content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
        return await self.send(room_id, content)

    async def invite(self, room_id: str, user_id: str) -> None:
        response = await self.client.room_invite(room_id, user_id)
        assert isinstance(response, RoomInviteResponse), response

    async def join(self, room_id: str) -> None:
        response = await self.client.join(room_id)
        assert isinstance(response, JoinResponse), response
        await self.wait_until(lambda: room_id in self.client.rooms)

    async def react(self, room_id: str, event_id: str, key: str) -> str:
        content = {"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}}
        response = await self.client.room_send(
            room_id, "m.reaction", content, ignore_unverified_devices=True
        )
        assert isinstance(response, RoomSendResponse), response
        return response.event_id

    async def redact(self, room_id: str, event_id: str) -> None:
        response = await self.client.room_redact(room_id, event_id)
        assert isinstance(response, RoomRedactResponse), response

    def seen(self, room_id: str, predicate: Predicate) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("room_id") == room_id and predicate(e)]

    async def wait_until(self, condition: Callable[[], bool], timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError("timed out waiting")
            await asyncio.sleep(0.05)

    async def wait_for(
        self, room_id: str, predicate: Predicate, timeout: float = 20
    ) -> dict[str, Any]:
        """The first event in the room that matches, waiting for it to arrive."""
        await self.wait_until(lambda: bool(self.seen(room_id, predicate)), timeout)
        return self.seen(room_id, predicate)[0]


def replies_to(event_id: str) -> Predicate:
    """Matches the bot's notices (not edits) that answer the message `event_id`."""

    def match(event: dict[str, Any]) -> bool:
        content = event.get("content", {})
        relation = content.get("m.relates_to", {})
        return (
            content.get("msgtype") == "m.notice"
            and relation.get("m.in_reply_to", {}).get("event_id") == event_id
        )

    return match


def from_user(user_id: str) -> Predicate:
    return lambda event: event.get("sender") == user_id and event.get("type") == "m.room.message"


def membership_of(user_id: str, membership: str) -> Predicate:
    """Matches the member event that gives `user_id` this membership."""
    return lambda event: (
        event.get("type") == "m.room.member"
        and event.get("state_key") == user_id
        and event.get("content", {}).get("membership") == membership
    )


async def bring_in(room: str, inviter: Person, newcomer: Person) -> None:
    """`inviter` invites `newcomer`, who joins; returns once the inviter sees the join."""
    await inviter.invite(room, newcomer.user_id)
    await newcomer.wait_until(lambda: room in newcomer.client.invited_rooms)
    await newcomer.join(room)
    await inviter.wait_for(room, membership_of(newcomer.user_id, "join"))


async def settle(person: Person, room: str, rounds: int = 2) -> None:
    """Wait for the bot to reply to `rounds` later `!help`s, one after another: by then
    it has taken everything said before them (in order of arrival, each worker one at a
    time), so what it did not do by now it did not do. A test waits for these instead
    of sleeping before it asserts that something did not happen. `!help` asks the model
    nothing and its reply is no answer (no answer id, no vote)."""
    for _ in range(rounds):
        sentinel = await person.say(room, "!help")
        await person.wait_for(room, replies_to(sentinel), timeout=60)


def nothing_found(*why: str) -> str:
    """The bot's "found nothing" in a room with commands on, in the current language:
    the notice, why the search was narrower (`why`), and what to try next."""
    from core import strings

    notice = " ".join((strings.NOTHING_FOUND, *why))
    return f"{notice}\n\n{strings.NOTHING_FOUND_NEXT.format(prefix='!')}"
