"""The bot's Matrix account: login that survives restarts, and the few calls it sends."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aiohttp import ClientError
from nio import (
    AsyncClient,
    AsyncClientConfig,
    LocalProtocolError,
    LoginResponse,
    ProfileGetDisplayNameResponse,
    RoomCreateResponse,
    RoomGetEventError,
    RoomGetEventResponse,
    RoomPreset,
    RoomRedactResponse,
    RoomSendResponse,
    UploadResponse,
    WhoamiResponse,
)

from bot.client import BotClient, decide_session_check, retry_wait
from bot.store_key import NIO_DEFAULT_KEY, StoreKeys, store_keys, unlock_store
from core.config.model import MatrixSettings

log = logging.getLogger(__name__)


class MatrixError(Exception):
    """A request to the homeserver failed; the text is for logs, not for users."""


# What a call to the homeserver may raise besides returning an error response.
SEND_ERRORS = (MatrixError, LocalProtocolError, ClientError, TimeoutError)
# Megolm, as every client enables it: what rooms the bot creates are encrypted with.
ENCRYPTION_STATE = {
    "type": "m.room.encryption",
    "state_key": "",
    "content": {"algorithm": "m.megolm.v1.aes-sha2"},
}
# A typing notice lasts 30 s; it is renewed before it runs out.
TYPING_REFRESH_SECONDS = 20


class MatrixIO:
    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        # Whether this process may still post (it holds the account's lease): once it may
        # not, a late notice could overwrite what the process that took over wrote.
        self.may_send: Callable[[], bool] = lambda: True

    def _check_may_send(self) -> None:
        if not self.may_send():
            raise MatrixError("this process no longer holds the account's lease")

    @property
    def user_id(self) -> str:
        return self.client.user_id

    async def close(self) -> None:
        await self.client.close()

    async def send(self, room_id: str, content: dict[str, Any]) -> str:
        """Send a message event and return its event id."""
        self._check_may_send()
        response = await self.client.room_send(
            room_id, "m.room.message", content, ignore_unverified_devices=True
        )
        if not isinstance(response, RoomSendResponse):
            raise MatrixError(f"sending to {room_id} failed: {response}")
        return response.event_id

    async def send_file(self, room_id: str, name: str, data: bytes, mimetype: str) -> str:
        """Upload a file (encrypted in encrypted rooms) and post it; returns the event id."""
        self._check_may_send()
        room = self.client.rooms.get(room_id)
        encrypted = bool(room and room.encrypted)
        response, keys = await self.client.upload(
            lambda *_: data, content_type=mimetype, filename=name, encrypt=encrypted,
            filesize=len(data),
        )  # fmt: skip
        if not isinstance(response, UploadResponse):
            raise MatrixError(f"uploading {name} failed: {response}")
        content: dict[str, Any] = {"msgtype": "m.file", "body": name,
                                   "info": {"mimetype": mimetype, "size": len(data)}}  # fmt: skip
        if encrypted and keys:
            content["file"] = {**keys, "url": response.content_uri}
        else:
            content["url"] = response.content_uri
        return await self.send(room_id, content)

    async def create_room(self, *, invite: list[str], is_direct: bool, preset: RoomPreset) -> str:
        """Create a room and return its id: encrypted whenever the bot has encryption on,
        so that what it posts there later never depends on remembering to turn it on."""
        self._check_may_send()
        state = [ENCRYPTION_STATE] if self.client.config.encryption_enabled else []
        response = await self.client.room_create(
            is_direct=is_direct, invite=invite, preset=preset, initial_state=state
        )
        if not isinstance(response, RoomCreateResponse):
            raise MatrixError(f"a room could not be made: {response}")
        return response.room_id

    def member_count(self, room_id: str) -> int:
        """Joined and invited members, as the last sync told."""
        room = self.client.rooms.get(room_id)
        return room.member_count if room else 0

    async def redact(self, room_id: str, event_id: str, reason: str) -> None:
        self._check_may_send()
        response = await self.client.room_redact(room_id, event_id, reason=reason)
        if not isinstance(response, RoomRedactResponse):
            raise MatrixError(f"redacting in {room_id} failed: {response}")

    async def is_gone(self, room_id: str, event_id: str) -> bool:
        """Whether one of the bot's messages can no longer be edited into view: the
        homeserver does not know it, it was redacted, or it is not the bot's. (A homeserver
        accepts an edit of a redacted message, but no client shows it.) Any other answer
        is no proof: the edit itself will tell."""
        response = await self.client.room_get_event(room_id, event_id)
        if isinstance(response, RoomGetEventError):
            return response.status_code == "M_NOT_FOUND"
        if not isinstance(response, RoomGetEventResponse):
            return False
        source = response.event.source
        redacted = bool(source.get("unsigned", {}).get("redacted_because"))
        return redacted or source.get("sender") != self.user_id

    async def typing(self, room_id: str, active: bool) -> None:
        await self.client.room_typing(room_id, typing_state=active, timeout=30_000)

    @contextlib.asynccontextmanager
    async def typing_while(self, room_id: str) -> AsyncIterator[None]:
        """Show the bot typing in the room for as long as the block runs."""

        async def keep_typing() -> None:
            while True:
                await self.typing(room_id, True)
                await asyncio.sleep(TYPING_REFRESH_SECONDS)

        typing = asyncio.create_task(keep_typing())
        try:
            yield
        finally:
            typing.cancel()
            with contextlib.suppress(*SEND_ERRORS):
                await self.typing(room_id, False)

    async def join(self, room_id: str) -> bool:
        response = await self.client.join(room_id)
        if getattr(response, "room_id", None) is None:
            log.warning("joining %s failed: %s", room_id, response)
            return False
        return True

    async def reject_invite(self, room_id: str, reason: str) -> None:
        # nio's room_leave sends no reason; the reason is what the inviter reads.
        path = f"/_matrix/client/v3/rooms/{quote(room_id, safe='')}/leave"
        headers = {"Authorization": f"Bearer {self.client.access_token}"}
        response = await self.client.send("POST", path, json.dumps({"reason": reason}), headers)
        if response.status != 200:
            log.warning("rejecting the invite to %s failed: HTTP %s", room_id, response.status)

    async def display_name(self) -> str | None:
        response = await self.client.get_displayname(self.client.user_id)
        return response.displayname if isinstance(response, ProfileGetDisplayNameResponse) else None


def _read_session(path: Path, settings: MatrixSettings) -> dict[str, str] | None:
    try:
        session = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    same_account = (
        session.get("homeserver") == settings.homeserver
        and session.get("user_id") == settings.user_id
    )
    return session if same_account else None


def _write_session(path: Path, client: AsyncClient, homeserver: str) -> None:
    session = {
        "homeserver": homeserver,
        "user_id": client.user_id,
        "device_id": client.device_id,
        "access_token": client.access_token,
    }
    path.write_text(json.dumps(session))
    os.chmod(path, 0o600)


async def connect(settings: MatrixSettings, data_dir: Path) -> MatrixIO:
    """Log in, reusing the device (and its encryption keys) saved in the data folder."""
    store = data_dir / "matrix-store"
    store.mkdir(parents=True, exist_ok=True)
    keys = store_keys(settings.store_pickle_key(), data_dir) if settings.encryption else None
    config = AsyncClientConfig(
        encryption_enabled=settings.encryption,
        store_sync_tokens=False,
        pickle_key=keys.current if keys else NIO_DEFAULT_KEY,
    )
    client = BotClient(settings.homeserver, settings.user_id, store_path=str(store), config=config)
    session_file = data_dir / "session.json"

    session = _read_session(session_file, settings)
    # A saved device whose keys no known pickle key opens is given up for a new one.
    if session and _store_opens(keys, store, session["user_id"], session["device_id"]):
        client.restore_login(session["user_id"], session["device_id"], session["access_token"])
        if await _confirmed(client) is not None:
            log.info("logged in as %s with saved device %s", client.user_id, client.device_id)
            return await _finish(client, settings)
        log.warning("the homeserver no longer knows the saved session; logging in again")

    if settings.login_password():
        response = await client.login(settings.login_password(), device_name=settings.device_name)
        if not isinstance(response, LoginResponse):
            await client.close()
            raise MatrixError(f"login as {settings.user_id} failed: {response.message}")
    else:
        client.access_token = settings.login_token() or ""
        whoami = await _confirmed(client)
        if whoami is None or whoami.user_id != settings.user_id:
            await client.close()
            raise MatrixError(f"the access token for {settings.user_id} was not accepted")
        if not _store_opens(keys, store, whoami.user_id, whoami.device_id or ""):
            await client.close()
            raise MatrixError(
                f"the encryption keys of device {whoami.device_id} do not open with the "
                "pickle key, and an access token cannot start a new device: configure the "
                "key they were locked with, or log in with a password"
            )
        client.restore_login(whoami.user_id, whoami.device_id or "", client.access_token)
    _write_session(session_file, client, settings.homeserver)
    log.info("logged in as %s with new device %s", client.user_id, client.device_id)
    return await _finish(client, settings)


async def _confirmed(client: AsyncClient) -> WhoamiResponse | None:
    """The session as the homeserver confirms it; None once it says the token is unknown.
    A transient failure (5xx, 429, no answer) is tried again with the sync's capped
    backoff for as long as it lasts, keeping the device and its keys; /health shows the
    sync failing meanwhile."""
    failures = 0
    while True:
        try:
            response = await client.whoami()
        except (ClientError, TimeoutError, OSError) as exc:
            status, errcode, what = None, None, type(exc).__name__
        else:
            if isinstance(response, WhoamiResponse):
                return response
            transport = getattr(response, "transport_response", None)
            status = getattr(transport, "status", None)
            errcode = getattr(response, "status_code", None)
            what = f"HTTP {status} {errcode or ''}".strip()
        check = decide_session_check(status, errcode)
        if check == "gone":
            return None
        if check == "refused":
            await client.close()
            raise MatrixError(f"the homeserver refused the bot's session: {what}")
        failures += 1
        wait = retry_wait(failures)
        log.warning(
            "the homeserver did not confirm the session (%s); trying again in %.1f s, "
            "keeping the device",
            what, wait,
        )  # fmt: skip
        await asyncio.sleep(wait)


def _store_opens(keys: StoreKeys | None, store: Path, user_id: str, device_id: str) -> bool:
    """Whether nio can open the device's store (always, without encryption: no store)."""
    return keys is None or unlock_store(store, user_id, device_id, keys)


async def _finish(client: AsyncClient, settings: MatrixSettings) -> MatrixIO:
    if settings.display_name:
        await client.set_displayname(settings.display_name)
    return MatrixIO(client)
