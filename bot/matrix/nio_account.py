"""The account on the homeserver, through matrix-nio: the one place nio's client is used.

Every write is fenced (bot/matrix/fence.py); every transport failure comes out as
MatrixError, so that callers catch one error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote

from aiohttp import ClientError
from nio import (
    AsyncClient,
    LocalProtocolError,
    MegolmEvent,
    MessageDirection,
    ProfileGetDisplayNameResponse,
    RoomCreateResponse,
    RoomGetEventError,
    RoomGetEventResponse,
    RoomMessagesResponse,
    RoomPreset,
    RoomRedactResponse,
    RoomSendResponse,
    SyncResponse,
    UploadResponse,
    WhoamiResponse,
)
from nio.crypto.attachments import decrypt_attachment
from nio.exceptions import EncryptionError
from nio.rooms import MatrixRoom

from bot.matrix.account import MatrixAccount, may_send, write_deadline
from bot.matrix.cross_signing import CrossSigningError, ensure_cross_signed
from bot.matrix.device_keys import ensure_keys_listed
from bot.matrix.fence import WriteKind
from bot.matrix.sync_batch import build_sync_batch
from bot.matrix.trusted_devices import TrustedDevices
from bot.matrix.types import (
    SENDER_DEVICE,
    EventSource,
    InviteRefused,
    MatrixError,
    Media,
    MediaTooLarge,
    Membership,
    MessagesPage,
    RoomState,
    SyncBatch,
)
from core.ids import RoomID, UserID

log = logging.getLogger(__name__)

# What nio and its transport raise besides returning an error response.
TRANSPORT_ERRORS = (LocalProtocolError, ClientError, TimeoutError, OSError)
# Megolm, as every client enables it: what rooms the bot creates are encrypted with.
ENCRYPTION_STATE = {
    "type": "m.room.encryption",
    "state_key": "",
    "content": {"algorithm": "m.megolm.v1.aes-sha2"},
}
MAX_REPORTED_SESSIONS = 10_000


@contextlib.asynccontextmanager
async def _as_matrix_error(what: str) -> AsyncIterator[None]:
    try:
        yield
    except TRANSPORT_ERRORS as exc:
        raise MatrixError(f"{what}: {type(exc).__name__}: {exc}") from exc


def build_room_state(room: MatrixRoom) -> RoomState:
    members: dict[UserID, Membership] = {
        UserID(user_id): "invite" if user.invited else "join"
        for user_id, user in room.users.items()
    }
    return RoomState(
        RoomID(room.room_id), members, room.history_visibility, room.join_rule, room.encrypted
    )


async def _read_bounded(response: Any, max_bytes: int | None) -> bytes:
    """A download's body, stopped with MediaTooLarge once over `max_bytes` (AES-CTR keeps
    an encrypted file's size, so the limit means the same for both)."""
    if response.status != 200:
        raise MatrixError(f"downloading a file failed: HTTP {response.status}")
    announced = response.content_length
    if max_bytes is not None and announced is not None and announced > max_bytes:
        raise MediaTooLarge(max_bytes)
    body = bytearray()
    async for chunk in response.content.iter_chunked(1 << 16):
        body += chunk
        if max_bytes is not None and len(body) > max_bytes:
            raise MediaTooLarge(max_bytes)
    return bytes(body)


def decide_token_problem(user_id: str, device_id: str, found: WhoamiResponse) -> str | None:
    """What is wrong with a replaced token for this account's device; None: nothing. A
    token of another device would lose the rooms' keys this device holds."""
    if found.user_id != user_id:
        return f"the new access token is for {found.user_id}, not {user_id}"
    if found.device_id != device_id:
        return (
            f"the new access token is for device {found.device_id or '(none)'}, not the "
            f"bot's device {device_id}: issue it for {device_id} (a new device would "
            "lose the rooms' keys)"
        )
    return None


class NioAccount:
    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        self.user_id = UserID(client.user_id)
        self.homeserver = str(client.homeserver)
        self._lease: Callable[[], float] = lambda: math.inf
        # The homeserver refused the access token (M_UNKNOWN_TOKEN, a soft logout when
        # it expired): nothing is written until a new token for this device is taken
        # (`use_token`); the store and its keys are kept.
        self.token_refused = False
        # Called with a token once taken (the login saves it with the session).
        self.on_token: Callable[[str], None] = lambda token: None
        # `matrix.verified_devices_only`: room keys go only to devices their owner
        # cross-signed, and messages from the others are not acted on.
        self.verified_devices_only = False
        self.devices = TrustedDevices(client)
        self._undecryptable_sessions: set[str] = set()
        self._key_requests: set[asyncio.Task[Any]] = set()
        # The rooms as plain data, each made again only after nio changed it: in a sync
        # that has the room, or when it reads an encrypted room's members before
        # sending there. An answer reads every room the bot is in.
        self._rooms: dict[str, RoomState] = {}
        self._all_rooms = False  # whether _rooms has every room nio knows
        # Rooms the bot left or was removed from: nio keeps them, with their members.
        self._left: set[str] = set()
        # Whether the homeserver was seen to list the device's keys (bot/matrix/
        # device_keys.py): asked once a start and again after each new token (`_tokens`
        # counts them, so that a check that began before one does not count after it).
        self._keys_listed = False
        self._tokens = 0
        # The keys were published again: the device's signature went with the old ones.
        self._sign_owed = False
        # What cross_sign was given, to sign the device again; one signing at a time.
        self._cross_signing: tuple[Path, str | None] | None = None
        self._signing = asyncio.Lock()

    @property
    def lease_left(self) -> Callable[[], float]:
        """Seconds this process may still write: the lease's, none while the token is
        refused (messages then stay pending, as when the lease is lost)."""
        return lambda: 0.0 if self.token_refused else self._lease()

    @lease_left.setter
    def lease_left(self, value: Callable[[], float]) -> None:
        self._lease = value

    async def _guard_keys(self, room_id: str) -> None:
        """With `verified_devices_only`: the room's key goes to trusted devices only."""
        room = self.client.rooms.get(room_id)
        if self.verified_devices_only and room is not None and room.encrypted:
            await self.devices.guard_room(room_id, list(room.users))

    def _mark_sender_device(self, event: Any) -> None:
        """With `verified_devices_only`: a decrypted event's JSON names the device it came
        from (by its key, not by a claim in the event), for the router to judge."""
        if self.verified_devices_only and getattr(event, "decrypted", False):
            device = self.devices.device_of(event.sender, event.sender_key)
            event.source[SENDER_DEVICE] = device or ""

    async def device_trusted(self, user_id: str, device_id: str) -> bool:
        """Whether the person cross-signed this device of theirs (fails closed)."""
        return (await self.devices.trusted(user_id)).get(device_id, False)

    async def use_token(self, token: str) -> str | None:
        """Take a replaced access token when the homeserver says it is this account's
        and this device's; else what is wrong with it (the old one stays)."""
        probe = AsyncClient(self.homeserver, self.user_id)
        probe.access_token = token
        try:
            async with _as_matrix_error("checking the new access token"):
                found = await probe.whoami()
        except MatrixError as exc:
            return f"the new access token could not be checked ({exc})"
        finally:
            await probe.close()
        if not isinstance(found, WhoamiResponse):
            return f"the homeserver does not accept the new access token ({found.status_code})"
        problem = decide_token_problem(self.user_id, self.client.device_id, found)
        if problem:
            return problem
        self.client.access_token = token
        self.token_refused = False
        # The device may have been logged out, its keys with it, before this token.
        self._keys_listed = False
        self._tokens += 1
        self.on_token(token)
        return None

    @property
    def encryption_on(self) -> bool:
        return bool(self.client.config.encryption_enabled)

    @property
    def last_retry(self) -> float | None:
        return getattr(self.client, "last_retry", None)

    @contextlib.asynccontextmanager
    async def _writing(
        self, kind: WriteKind, room_id: str, what: str, sealed: bool = False
    ) -> AsyncIterator[None]:
        """The one way a write goes out: through the fence, within the lease's deadline
        (nio's own retries included), its transport errors as MatrixError."""
        async with write_deadline(self, kind, room_id, sealed), _as_matrix_error(what):
            yield

    # Reads.

    def rooms(self) -> Mapping[RoomID, RoomState]:
        current = self.client.rooms
        if self._all_rooms and len(self._rooms) == len(current) - len(self._left):
            return cast(Mapping[RoomID, RoomState], self._rooms)
        for room_id in [known for known in self._rooms if known not in current]:
            del self._rooms[room_id]
        for room_id, room in current.items():
            if room_id not in self._rooms and room_id not in self._left:
                self._rooms[room_id] = build_room_state(room)
        self._all_rooms = True
        return cast(Mapping[RoomID, RoomState], self._rooms)

    def room(self, room_id: str) -> RoomState | None:
        known = self._rooms.get(room_id)
        if known is None:
            room = self.client.rooms.get(room_id)
            if room is None or room_id in self._left:
                return None
            known = self._rooms[room_id] = build_room_state(room)
        return known

    def room_name(self, room_id: str) -> str:
        room = self.client.rooms.get(room_id)
        return room.display_name if room is not None else room_id

    def member_name(self, room_id: str, user_id: str) -> str | None:
        room = self.client.rooms.get(room_id)
        return room.user_name(user_id) if room is not None else None

    async def sync(self, since: str | None, timeout_ms: int, full_state: bool) -> SyncBatch:
        async with _as_matrix_error("sync"):
            response = await self.client.sync(
                timeout=timeout_ms, since=since, full_state=full_state
            )
        if not isinstance(response, SyncResponse):
            if getattr(response, "status_code", None) == "M_UNKNOWN_TOKEN":
                if not self.token_refused:
                    log.error(
                        "the homeserver refused the access token (%s): nothing is sent "
                        "until a new one for device %s is in matrix.access_token_file; "
                        "the encryption store is kept",
                        response.status_code,
                        self.client.device_id,
                    )
                self.token_refused = True
            raise MatrixError(f"sync failed: {response}")
        self.devices.forget(list(response.device_list.changed))
        for info in response.rooms.join.values():
            for event in info.timeline.events:
                self._mark_sender_device(event)
        rooms = response.rooms
        self._left.update(rooms.leave)
        self._left.difference_update((*rooms.join, *rooms.invite))
        for room_id in (*rooms.join, *rooms.invite, *rooms.leave):
            self._rooms.pop(room_id, None)
            self._all_rooms = False
        for room_id, info in response.rooms.join.items():
            for event in info.timeline.events:
                if isinstance(event, MegolmEvent):
                    self._report_undecryptable(room_id, event)
        return build_sync_batch(response, self.user_id)

    async def fetch_event(self, room_id: str, event_id: str) -> EventSource | None:
        try:
            response = await self.client.room_get_event(room_id, event_id)
        except TRANSPORT_ERRORS as exc:
            log.warning("an event of %s could not be read: %s", room_id, type(exc).__name__)
            return None
        if not isinstance(response, RoomGetEventResponse):
            return None
        # An event the bot cannot decrypt still tells who sent it and when.
        return dict(response.event.source)

    async def is_gone(self, room_id: str, event_id: str) -> bool:
        """A homeserver accepts an edit of a redacted message, but no client shows it;
        gone also when the homeserver does not know the event or it is not the bot's.
        Any other answer is no proof: the edit itself will tell."""
        async with _as_matrix_error("reading an event"):
            response = await self.client.room_get_event(room_id, event_id)
        if isinstance(response, RoomGetEventError):
            return response.status_code == "M_NOT_FOUND"
        if not isinstance(response, RoomGetEventResponse):
            return False
        source = response.event.source
        redacted = bool(source.get("unsigned", {}).get("redacted_because"))
        return redacted or source.get("sender") != self.user_id

    async def fetch_messages(
        self,
        room_id: str,
        start: str | None,
        end: str | None,
        limit: int,
        *,
        ask_keys: bool = False,
    ) -> MessagesPage:
        start = start or self.client.next_batch
        async with _as_matrix_error(f"reading the messages of {room_id}"):
            response = await self.client.room_messages(
                room_id, start=start, end=end, direction=MessageDirection.back, limit=limit
            )
        if not isinstance(response, RoomMessagesResponse):
            raise MatrixError(f"reading the messages of {room_id} failed: {response}")
        events, undecrypted = [], []
        for event in response.chunk:
            if not isinstance(event, MegolmEvent):
                self._mark_sender_device(event)
                events.append(dict(event.source))
                continue
            undecrypted.append(event.server_timestamp)
            if ask_keys:
                self._report_undecryptable(room_id, event)
        more = bool(response.chunk) and bool(response.end) and response.end != start
        return MessagesPage(events, response.end if more else None, undecrypted)

    async def messages_token_before(self, room_id: str, ts_ms: int) -> str | None:
        # nio has neither call: the first event sent at `ts_ms` or after
        # (/timestamp_to_event, Matrix 1.6), then the token just before it (/context).
        room = quote(room_id, safe="")
        found = await self._get(
            f"/_matrix/client/v1/rooms/{room}/timestamp_to_event?ts={ts_ms}&dir=f"
        )
        event_id = found.get("event_id") if found else None
        if not isinstance(event_id, str):
            return None  # nothing sent since, or a homeserver without the call
        context = await self._get(
            f"/_matrix/client/v3/rooms/{room}/context/{quote(event_id, safe='')}?limit=0"
        )
        start = context.get("start") if context else None
        return start if isinstance(start, str) else None

    async def _get(self, path: str) -> dict[str, Any] | None:
        """A client API GET's JSON; None when the homeserver refuses it."""
        headers = {"Authorization": f"Bearer {self.client.access_token}"}
        async with _as_matrix_error("reading a room"):
            response = await self.client.send("GET", path, None, headers)
            try:
                body = await response.json(content_type=None)
            except ValueError:
                body = None  # not JSON (a proxy's error page): the homeserver cannot say
            finally:
                response.release()
        if response.status != 200 or not isinstance(body, dict):
            log.debug("GET %s: HTTP %s", path.split("?")[0], response.status)
            return None
        return body

    async def fetch_media(self, media: Media, max_bytes: int | None = None) -> bytes:
        # The authenticated media API (/_matrix/client/v1/media), which current Synapse
        # requires, read as a stream: nio's download holds the whole body before anyone
        # can look at its size.
        server, _, media_id = media.url.removeprefix("mxc://").partition("/")
        if not media.url.startswith("mxc://") or not server or not media_id:
            raise MatrixError("downloading a file failed: not an mxc:// URL")
        path = (
            f"/_matrix/client/v1/media/download/{quote(server, safe='')}/"
            f"{quote(media_id, safe='')}?allow_redirect=true"
        )
        headers = {"Authorization": f"Bearer {self.client.access_token}"}
        async with _as_matrix_error("downloading a file"):
            response = await self.client.send("GET", path, None, headers)
            try:
                body = await _read_bounded(response, max_bytes)
            finally:
                response.close()
        if not media.encrypted:
            return body
        try:
            return cast(bytes, decrypt_attachment(body, media.key, media.sha256, media.iv))
        except (EncryptionError, KeyError, ValueError, TypeError) as exc:
            raise MatrixError(f"a file could not be decrypted: {type(exc).__name__}") from None

    async def display_name(self) -> str | None:
        async with _as_matrix_error("reading the display name"):
            response = await self.client.get_displayname(self.client.user_id)
        return response.displayname if isinstance(response, ProfileGetDisplayNameResponse) else None

    # Writes.

    async def set_display_name(self, name: str) -> None:
        async with self._writing("room", "", "setting the display name"):
            await self.client.set_displayname(name)

    async def send(
        self,
        room_id: str,
        content: dict[str, Any],
        *,
        sealed: bool = False,
        txn_id: str | None = None,
    ) -> str:
        async with self._writing("message", room_id, f"sending to {room_id}", sealed):
            await self._guard_keys(room_id)
            try:
                response = await self.client.room_send(
                    room_id,
                    "m.room.message",
                    content,
                    tx_id=txn_id,
                    ignore_unverified_devices=True,
                )
            finally:
                # nio reads an encrypted room's members anew before its first message there.
                self._rooms.pop(room_id, None)
                self._all_rooms = False
        if not isinstance(response, RoomSendResponse):
            raise MatrixError(f"sending to {room_id} failed: {response}")
        return response.event_id

    async def send_file(
        self, room_id: str, name: str, data: bytes, mimetype: str, *, sealed: bool = False
    ) -> str:
        """Upload a file (encrypted in encrypted rooms) and post it."""
        room = self.room(room_id)
        encrypted = bool(room and room.encrypted)
        async with self._writing("message", room_id, f"uploading {name}", sealed):
            response, keys = await self.client.upload(
                lambda *_: data,
                content_type=mimetype,
                filename=name,
                encrypt=encrypted,
                filesize=len(data),
            )
        if not isinstance(response, UploadResponse):
            raise MatrixError(f"uploading {name} failed: {response}")
        content: dict[str, Any] = {
            "msgtype": "m.file",
            "body": name,
            "info": {"mimetype": mimetype, "size": len(data)},
        }
        if encrypted and keys:
            content["file"] = {**keys, "url": response.content_uri}
        else:
            content["url"] = response.content_uri
        return await self.send(room_id, content, sealed=sealed)

    async def redact(self, room_id: str, event_id: str, reason: str) -> None:
        async with self._writing("signal", room_id, f"redacting in {room_id}"):
            response = await self.client.room_redact(room_id, event_id, reason=reason)
        if not isinstance(response, RoomRedactResponse):
            raise MatrixError(f"redacting in {room_id} failed: {response}")

    async def typing(self, room_id: str, active: bool) -> None:
        async with self._writing("signal", room_id, f"typing in {room_id}"):
            await self.client.room_typing(room_id, typing_state=active, timeout=30_000)

    async def create_room(self, *, invite: list[str], direct: bool) -> RoomID:
        """So that what the bot posts there later never depends on remembering to turn
        encryption on, the room is encrypted from its first state event."""
        state = [ENCRYPTION_STATE] if self.encryption_on else []
        async with self._writing("room", "", "creating a room"):
            response = await self.client.room_create(
                is_direct=direct,
                invite=invite,
                preset=RoomPreset.trusted_private_chat,
                initial_state=state,
            )
        if not isinstance(response, RoomCreateResponse):
            errcode = getattr(response, "status_code", None)
            if errcode == "M_INVITE_BLOCKED" or (invite and errcode == "M_FORBIDDEN"):
                raise InviteRefused(
                    f"a room could not be made: {response}", blocked=errcode == "M_INVITE_BLOCKED"
                )
            raise MatrixError(f"a room could not be made: {response}")
        return RoomID(response.room_id)

    async def join(self, room_id: str) -> bool:
        async with self._writing("room", room_id, f"joining {room_id}"):
            response = await self.client.join(room_id)
        if getattr(response, "room_id", None) is None:
            log.warning("joining %s failed: %s", room_id, response)
            return False
        return True

    async def reject_invite(self, room_id: str, reason: str) -> None:
        # nio's room_leave sends no reason; the reason is what the inviter reads.
        path = f"/_matrix/client/v3/rooms/{quote(room_id, safe='')}/leave"
        headers = {"Authorization": f"Bearer {self.client.access_token}"}
        async with self._writing("room", room_id, f"leaving {room_id}"):
            response = await self.client.send("POST", path, json.dumps({"reason": reason}), headers)
        if response.status != 200:
            log.warning("rejecting the invite to %s failed: HTTP %s", room_id, response.status)

    async def maintain_keys(self) -> None:
        client = self.client
        if not client.olm:
            return
        async with self._writing("room", "", "maintaining encryption keys"):
            await self._keep_device_listed()
            if client.should_upload_keys:
                await client.keys_upload()
            if client.should_query_keys:
                await client.keys_query()
            if client.should_claim_keys:
                await client.keys_claim(client.get_users_for_key_claiming())
            await client.send_to_device_messages()

    async def _keep_device_listed(self) -> None:
        """The device's keys published again when the homeserver lists none, and the
        device signed again (bot/matrix/device_keys.py). A failure is logged and the step
        tried after the next sync; the rest of the keys' upkeep goes on meanwhile."""
        try:
            if not self._keys_listed:
                tokens = self._tokens
                async with _as_matrix_error("checking the device's keys"):
                    if await ensure_keys_listed(self.client):
                        self._sign_owed = True
                self._keys_listed = tokens == self._tokens
            if self._sign_owed and self._cross_signing is not None:
                async with _as_matrix_error("signing the device again"), self._signing:
                    await ensure_cross_signed(self.client, *self._cross_signing)
                self._sign_owed = False
        except CrossSigningError as exc:
            self._sign_owed = False  # refused: as at the start, it stays unverified
            log.warning("the bot's device stays unverified: %s", exc)
        except MatrixError as exc:
            log.warning("the device's keys on the homeserver were not checked: %s", exc)

    async def cross_sign(self, data_dir: Path, password: str | None) -> None:
        """Sign the device with the account's cross-signing keys (see cross_signing.py);
        raises CrossSigningError when the homeserver refuses."""
        self._cross_signing = (data_dir, password)
        async with self._writing("room", "", "cross-signing the device"), self._signing:
            await ensure_cross_signed(self.client, data_dir, password)

    async def close(self) -> None:
        await self.client.close()

    def _report_undecryptable(self, room_id: str, event: MegolmEvent) -> None:
        """Logged once per session, and its key asked for from the sender's devices."""
        if event.session_id in self._undecryptable_sessions:
            return
        if len(self._undecryptable_sessions) >= MAX_REPORTED_SESSIONS:
            self._undecryptable_sessions.clear()  # reported again at worst, never unbounded
        self._undecryptable_sessions.add(event.session_id)
        log.warning(
            "cannot decrypt messages in %s from %s (session %s); asking for the key",
            room_id,
            event.sender,
            event.session_id,
        )
        if self.client.olm and may_send(self):
            task = asyncio.create_task(self._request_key(event))
            self._key_requests.add(task)
            task.add_done_callback(self._key_requests.discard)

    async def _request_key(self, event: MegolmEvent) -> None:
        try:
            # A to-device message: written within the lease like any other write.
            async with self._writing("room", "", "asking for a room key"):
                await self.client.request_room_key(event)
        except (MatrixError, LocalProtocolError) as exc:
            log.warning("the key request for session %s failed: %s", event.session_id, exc)


if TYPE_CHECKING:  # mypy's proof that the real account is one
    _real_is_an_account: MatrixAccount = NioAccount(AsyncClient(""))
