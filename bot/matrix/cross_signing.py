"""Cross-signing of the bot's account, so that Element shows its answers as verified and
clients that refuse unverified devices share their room keys with it.

matrix-nio has no cross-signing, so this uses the Client-Server API calls of the spec:
`/keys/device_signing/upload` (the master, self-signing and user-signing public keys,
behind user-interactive auth with the account's password when the homeserver asks) and
`/keys/signatures/upload` (the device's keys signed by the self-signing key). Signatures
are Ed25519 from `cryptography` over nio's canonical JSON; nothing else is hand-made.

The private keys live in `bot.data_dir/cross-signing.json` (0600, in the private data
folder beside nio's encryption store). Every start checks what the homeserver publishes
and signs the current device if it is not yet (a new device after a lost session).
"""

from __future__ import annotations

import base64
import json
import logging
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nio import AsyncClient
from nio.api import Api

log = logging.getLogger(__name__)

KEY_FILE = "cross-signing.json"
USAGES = ("master", "self_signing", "user_signing")
Plan = Literal["upload", "sign_device", "done", "replaced_elsewhere"]


class CrossSigningError(Exception):
    """The homeserver refused a step; the message says which, for the log."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode().rstrip("=")


@dataclass(frozen=True)
class CrossSigningKeys:
    """The three private keys, by usage; `published` once the homeserver took them."""

    private: dict[str, Ed25519PrivateKey]
    published: bool = False

    @classmethod
    def generate(cls) -> CrossSigningKeys:
        return cls({usage: Ed25519PrivateKey.generate() for usage in USAGES})

    def public(self, usage: str) -> str:
        return _b64(self.private[usage].public_key().public_bytes_raw())

    def key_id(self, usage: str) -> str:
        return f"ed25519:{self.public(usage)}"


def build_signed(obj: dict[str, Any], user_id: str, key: Ed25519PrivateKey) -> dict[str, Any]:
    """`obj` with the key's signature added, over its canonical JSON without `signatures`
    and `unsigned` (the Matrix signing rules)."""
    unsigned = {k: v for k, v in obj.items() if k not in ("signatures", "unsigned")}
    signature = _b64(key.sign(Api.to_canonical_json(unsigned).encode()))
    key_id = f"ed25519:{_b64(key.public_key().public_bytes_raw())}"
    signatures = {user: dict(sigs) for user, sigs in obj.get("signatures", {}).items()}
    signatures.setdefault(user_id, {})[key_id] = signature
    return {**unsigned, "signatures": signatures}


def build_public_keys(user_id: str, keys: CrossSigningKeys) -> dict[str, dict[str, Any]]:
    """The body of `/keys/device_signing/upload`: the master key, and the two others
    signed by it."""

    def public(usage: str) -> dict[str, Any]:
        return {
            "user_id": user_id,
            "usage": [usage],
            "keys": {keys.key_id(usage): keys.public(usage)},
        }

    master = keys.private["master"]
    return {
        "master_key": public("master"),
        "self_signing_key": build_signed(public("self_signing"), user_id, master),
        "user_signing_key": build_signed(public("user_signing"), user_id, master),
    }


def decide_plan(
    published_master: str | None, ours: str | None, device_signed: bool, *, ours_published: bool
) -> Plan:
    """What to do, from the master key the homeserver publishes and the one we hold (and
    whether ours ever reached it: an upload that failed is tried again)."""
    if published_master is None or ours is None:
        return "upload"  # first start, or the data folder (and our keys) was lost
    if published_master != ours:
        return "replaced_elsewhere" if ours_published else "upload"
    return "done" if device_signed else "sign_device"


def read_keys(path: Path) -> CrossSigningKeys | None:
    try:
        saved = json.loads(path.read_text())
        return CrossSigningKeys(
            {
                usage: Ed25519PrivateKey.from_private_bytes(
                    base64.b64decode(saved[usage] + "=" * (-len(saved[usage]) % 4))
                )
                for usage in USAGES
            },
            published=bool(saved.get("published")),
        )
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as exc:
        raise CrossSigningError(f"{path} is damaged ({type(exc).__name__}); move it away") from None


def write_keys(path: Path, keys: CrossSigningKeys) -> None:
    """Written whole or not at all (a new file, 0600 from its creation, moved in place)."""
    saved: dict[str, Any] = {
        usage: _b64(key.private_bytes_raw()) for usage, key in keys.private.items()
    }
    saved["published"] = keys.published
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump(saved, file)
        file.flush()
        os.fsync(file.fileno())
    os.replace(partial, path)


async def call_client_api(client: AsyncClient, path: str, body: dict[str, Any]) -> tuple[int, dict]:
    """A POST of the client API (nio has no call for it) and its status and JSON."""
    response = await client.send(
        "POST",
        Api._build_path(path.split("/")),
        json.dumps(body),
        headers={
            "Authorization": f"Bearer {client.access_token}",
            "Content-Type": "application/json",
        },
    )
    try:
        return response.status, await response.json(content_type=None)
    finally:
        response.release()


async def _upload_public_keys(client: AsyncClient, body: dict, password: str | None) -> None:
    """Upload the public keys, with the account's password when the homeserver asks for
    user-interactive auth (Synapse does not for an account's first keys)."""
    status, reply = await call_client_api(client, "keys/device_signing/upload", body)
    if status == 401 and "session" in reply:
        if password is None:
            raise CrossSigningError(
                "the homeserver asks for the account's password to publish cross-signing "
                "keys; log in with matrix.password_env"
            )
        auth = {
            "type": "m.login.password",
            "session": reply["session"],
            "password": password,
            "identifier": {"type": "m.id.user", "user": client.user_id},
        }
        status, reply = await call_client_api(
            client, "keys/device_signing/upload", {**body, "auth": auth}
        )
    if status != 200:
        raise CrossSigningError(f"publishing the cross-signing keys failed: {reply.get('errcode')}")


async def ensure_cross_signed(client: AsyncClient, data_dir: Path, password: str | None) -> Plan:
    """Bootstrap the account's cross-signing keys if needed and sign this device."""
    if client.should_upload_keys:
        await client.keys_upload()  # the device's own keys must be there to be signed
    user, device = client.user_id, client.device_id
    status, published = await call_client_api(
        client, "keys/query", {"device_keys": {user: [device]}}
    )
    if status != 200:
        raise CrossSigningError(f"reading the account's keys failed: {status}")
    master_keys = published.get("master_keys", {}).get(user, {}).get("keys", {})
    published_master = next(iter(master_keys.values()), None)
    path = data_dir / KEY_FILE
    keys = read_keys(path)
    device_keys = published.get("device_keys", {}).get(user, {}).get(device)
    if device_keys is None:
        raise CrossSigningError("the homeserver does not list this device's keys")
    signed_by = device_keys.get("signatures", {}).get(user, {})
    plan = decide_plan(
        published_master,
        keys.public("master") if keys else None,
        keys is not None and keys.key_id("self_signing") in signed_by,
        ours_published=keys is not None and keys.published,
    )
    if plan == "replaced_elsewhere":
        log.warning(
            "the account's cross-signing keys were replaced outside the bot; its device "
            "stays unverified. Delete %s to have the bot publish its own again",
            path,
        )
        return plan
    if plan == "upload":
        # Ours again when they never reached the homeserver (or it has none); new ones
        # when ours were lost with the data folder.
        keys = keys or CrossSigningKeys.generate()
        write_keys(path, keys)  # before publishing: keys we published are never lost
        await _upload_public_keys(client, build_public_keys(user, keys), password)
        keys = replace(keys, published=True)
        write_keys(path, keys)
        log.info("published cross-signing keys for %s", user)
    if plan in ("upload", "sign_device"):
        assert keys is not None
        signed = build_signed(device_keys, user, keys.private["self_signing"])
        status, reply = await call_client_api(
            client, "keys/signatures/upload", {user: {device: signed}}
        )
        if status != 200 or reply.get("failures"):
            raise CrossSigningError(f"signing the device failed: {reply.get('failures')}")
        log.info("signed device %s with the account's self-signing key", device)
    return plan
