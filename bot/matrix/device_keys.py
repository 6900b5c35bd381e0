"""The bot's own device keys as the homeserver lists them, published again when gone.

nio uploads a device's identity keys once and then trusts its store ("shared"). But a
device logged out on the homeserver (`/logout`, deleting it in a client or in MAS)
loses its keys there, and a token issued again for the same device id brings the device
back without them: nobody's client can then encrypt for the bot, and it silently stops
reading encrypted rooms. So each start, and each new token, asks the homeserver what it
lists for this device (`/keys/query`) and publishes the keys again when it lists none.

When it lists other keys for this device id, another client took the id: the bot does
not overwrite them (that client's messages would become unreadable to others) and says
so in the log; it reads encrypted rooms again only on a device of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal

from nio import AsyncClient, KeysUploadResponse

from bot.matrix.cross_signing import call_client_api
from bot.matrix.types import MatrixError

log = logging.getLogger(__name__)

Listed = Literal["ours", "none", "other"]


def decide_listed(
    listed: Mapping[str, Any] | None, device_id: str, identity: Mapping[str, str]
) -> Listed:
    """What the homeserver lists for this device: our identity keys (`ours`), nothing
    (`none`: the device was logged out and came back), or keys of another client."""
    keys = (listed or {}).get("keys") or {}
    if not keys:
        return "none"
    ours = {f"{algorithm}:{device_id}": key for algorithm, key in identity.items()}
    return "ours" if all(keys.get(name) == key for name, key in ours.items()) else "other"


async def fetch_listed(client: AsyncClient) -> Mapping[str, Any] | None:
    """The device keys the homeserver lists for the bot's device (None when none);
    raises MatrixError when it does not answer the query."""
    user, device = client.user_id, client.device_id
    try:
        status, reply = await call_client_api(
            client, "keys/query", {"device_keys": {user: [device]}}
        )
    except ValueError as exc:  # not JSON (a proxy's error page): nothing is known
        raise MatrixError(f"the device's keys listed were unreadable: {exc}") from None
    if status != 200:
        raise MatrixError(f"the homeserver did not list the device's keys: HTTP {status}")
    found: Mapping[str, Any] | None = reply.get("device_keys", {}).get(user, {}).get(device)
    return found


async def ensure_keys_listed(client: AsyncClient) -> bool:
    """Publish the device's keys again when the homeserver lists none; True when they
    were published again (the caller signs the device again, if it cross-signs)."""
    if client.olm is None or not client.olm.account.shared:
        return False  # its keys were never published: nio publishes them as it starts
    listed = decide_listed(
        await fetch_listed(client), client.device_id, client.olm.account.identity_keys
    )
    if listed == "other":
        log.error(
            "the homeserver lists other encryption keys for device %s: another client uses "
            "its id. The bot leaves them as they are and cannot read encrypted rooms until "
            "it runs on a device of its own (docs/getting-started/access-tokens.md)",
            client.device_id,
        )
        return False
    if listed == "ours":
        return False
    log.warning(
        "the homeserver lists no encryption keys for device %s (it was logged out and its "
        "token issued again); publishing them again",
        client.device_id,
    )
    # nio uploads the identity keys only while the account is not marked shared; the
    # one-time keys went with the device, so new ones go up with them.
    client.olm.account.shared = False
    response = await client.keys_upload()
    if not isinstance(response, KeysUploadResponse):
        raise MatrixError(f"publishing the device's keys failed: {response}")
    return True
