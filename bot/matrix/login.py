"""Logging the bot's account in, so that the login survives restarts: the device (and its
encryption keys) saved in the data folder is reused for as long as the homeserver knows it."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
from collections.abc import Callable
from pathlib import Path

from aiohttp import ClientError
from nio import (
    AsyncClient,
    AsyncClientConfig,
    LoginInfoResponse,
    LoginResponse,
    WhoamiResponse,
)

from bot.matrix.backoff import retry_wait
from bot.matrix.client import BotClient, decide_session_check
from bot.matrix.nio_account import NioAccount
from bot.matrix.store_key import NIO_DEFAULT_KEY, StoreKeys, store_keys, unlock_store
from bot.matrix.types import MatrixError
from core.config.model import MatrixSettings

# Tries of one request after a timeout or a 429, beyond the first (see connect).
MAX_RETRIES = 6
NO_PASSWORD_LOGIN = (
    "{homeserver} does not offer password login (it authenticates through the Matrix "
    "Authentication Service, or local passwords are off): give the bot an access token "
    "in matrix.access_token_file instead (docs/getting-started/access-tokens.md)"
)
log = logging.getLogger(__name__)


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


async def connect(
    settings: MatrixSettings, data_dir: Path, lease_left: Callable[[], float] = lambda: math.inf
) -> NioAccount:
    """Log in, reusing the device (and its encryption keys) saved in the data folder; the
    account writes (its display name first) within `lease_left` seconds."""
    store = data_dir / "matrix-store"
    store.mkdir(parents=True, exist_ok=True)
    keys = store_keys(settings.store_pickle_key(), data_dir) if settings.encryption else None
    config = AsyncClientConfig(
        # nio retries timeouts and 429s without end by default: a request is given up
        # after these many, and the caller (the sync loop, a reply's retry) decides.
        max_limit_exceeded=MAX_RETRIES,
        max_timeouts=MAX_RETRIES,
        encryption_enabled=settings.encryption,
        store_sync_tokens=False,
        pickle_key=keys.current if keys else NIO_DEFAULT_KEY,
    )
    client = BotClient(settings.homeserver, settings.user_id, store_path=str(store), config=config)
    session_file = data_dir / "session.json"

    session = _read_session(session_file, settings)
    # A token file says which token to use: one replaced while the bot was away is taken
    # for the saved device (the same device only, checked below).
    saved_device = session["device_id"] if session else None
    token = settings.login_token()
    if session and settings.token_file() and token and token != session["access_token"]:
        session = None
    # A saved device whose keys no known pickle key opens is given up for a new one.
    if session and _store_opens(keys, store, session["user_id"], session["device_id"]):
        client.restore_login(session["user_id"], session["device_id"], session["access_token"])
        if await _confirmed(client) is not None:
            log.info("logged in as %s with saved device %s", client.user_id, client.device_id)
            return await _finish(client, settings, lease_left, session_file)
        log.warning("the homeserver no longer knows the saved session; logging in again")

    if settings.login_password():
        if not await _offers_password_login(client):
            await client.close()
            raise MatrixError(NO_PASSWORD_LOGIN.format(homeserver=settings.homeserver))
        response = await client.login(settings.login_password(), device_name=settings.device_name)
        if not isinstance(response, LoginResponse):
            await client.close()
            raise MatrixError(f"login as {settings.user_id} failed: {response.message}")
    else:
        client.access_token = token or ""
        whoami = await _confirmed(client)
        if whoami is None or whoami.user_id != settings.user_id:
            await client.close()
            raise MatrixError(f"the access token for {settings.user_id} was not accepted")
        if settings.token_file() and saved_device and whoami.device_id != saved_device:
            await client.close()
            raise MatrixError(
                f"the access token in {settings.token_file()} is for device "
                f"{whoami.device_id}, but the bot's keys are device {saved_device}'s: issue "
                f"the token for {saved_device}, or remove session.json from the data "
                "folder to start a new device (the rooms' keys of the old one are lost)"
            )
        if not _store_opens(keys, store, whoami.user_id, whoami.device_id or ""):
            await client.close()
            raise MatrixError(
                f"the encryption keys of device {whoami.device_id} do not open with the "
                "pickle key, and an access token cannot start a new device: configure the "
                "key they were locked with, or log in with a password"
            )
        client.restore_login(whoami.user_id, whoami.device_id or "", client.access_token)
    _write_session(session_file, client, settings.homeserver)
    log.info("logged in as %s with device %s", client.user_id, client.device_id)
    return await _finish(client, settings, lease_left, session_file)


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
            what,
            wait,
        )
        await asyncio.sleep(wait)


def _store_opens(keys: StoreKeys | None, store: Path, user_id: str, device_id: str) -> bool:
    """Whether nio can open the device's store (always, without encryption: no store)."""
    return keys is None or unlock_store(store, user_id, device_id, keys)


async def _offers_password_login(client: AsyncClient) -> bool:
    """Whether the homeserver offers password login (MAS deployments may not); when it
    cannot say, the login itself will."""
    flows = await client.login_info()
    return not isinstance(flows, LoginInfoResponse) or "m.login.password" in flows.flows


async def _finish(
    client: AsyncClient,
    settings: MatrixSettings,
    lease_left: Callable[[], float],
    session_file: Path,
) -> NioAccount:
    account = NioAccount(client)
    account.lease_left = lease_left
    account.verified_devices_only = settings.verified_devices_only
    if not settings.verified_devices_only and client.olm is not None:
        # Turned off: the devices it kept from room keys get them again.
        for device in client.device_store:
            if device.blacklisted:
                client.unblacklist_device(device)
    # A replaced token taken while running is saved with the session, as a login's is.
    account.on_token = lambda token: _write_session(session_file, client, settings.homeserver)
    if settings.display_name:
        await account.set_display_name(settings.display_name)
    return account
