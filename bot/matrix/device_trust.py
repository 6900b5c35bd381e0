"""Which of a person's devices their owner cross-signed (MSC4153: clients share room keys
only with, and show messages only from, devices their owner verified).

From a `/keys/query` answer: a device counts when its keys carry a valid signature of
the owner's self-signing key, and that key a valid signature of the owner's master key.
The master key is pinned on first sight (trust on first use, as Element does for people
nobody verified by hand): a changed one is taken, and said in the log, so that a reset
identity is noticed. Ed25519 from `cryptography` over nio's canonical JSON (the signing
rules of the spec), as the bot's own cross-signing does (cross_signing.py).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from nio.api import Api

Pin = Literal["pinned", "same", "changed"]


def _key_of(published: Any) -> tuple[str, str] | None:
    """(key id, base64 public key) of a cross-signing key object; None when malformed."""
    keys = published.get("keys") if isinstance(published, Mapping) else None
    if not isinstance(keys, Mapping) or len(keys) != 1:
        return None
    key_id, value = next(iter(keys.items()))
    return (str(key_id), str(value)) if isinstance(value, str) else None


def check_signed(obj: Any, user_id: str, key: tuple[str, str]) -> bool:
    """Whether `obj` carries a valid signature by `key` (id, base64) of `user_id`."""
    if not isinstance(obj, Mapping):
        return False
    signature = obj.get("signatures", {}).get(user_id, {}).get(key[0])
    if not isinstance(signature, str):
        return False
    unsigned = {k: v for k, v in obj.items() if k not in ("signatures", "unsigned")}
    try:
        public = Ed25519PublicKey.from_public_bytes(_unb64(key[1]))
        public.verify(_unb64(signature), Api.to_canonical_json(unsigned).encode())
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def decide_cross_signed(user_id: str, answer: Mapping[str, Any]) -> dict[str, bool]:
    """Each of the user's devices in a `/keys/query` answer, and whether its owner
    cross-signed it (all False when the owner has no valid self-signing key)."""
    devices = answer.get("device_keys", {}).get(user_id, {})
    master = _key_of(answer.get("master_keys", {}).get(user_id))
    self_signing_obj = answer.get("self_signing_keys", {}).get(user_id)
    self_signing = _key_of(self_signing_obj)
    valid = (
        master is not None
        and self_signing is not None
        and check_signed(self_signing_obj, user_id, master)
    )
    return {
        str(device): bool(valid and self_signing and check_signed(keys, user_id, self_signing))
        for device, keys in (devices.items() if isinstance(devices, Mapping) else ())
    }


def master_key_of(user_id: str, answer: Mapping[str, Any]) -> str | None:
    found = _key_of(answer.get("master_keys", {}).get(user_id))
    return found[1] if found else None


def decide_pin(pinned: str | None, current: str | None) -> Pin:
    """What a master key seen now means for the one pinned before."""
    if pinned is None:
        return "pinned"
    return "same" if current == pinned else "changed"
