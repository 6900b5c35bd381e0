"""Checking a Matrix signature as any client does: Ed25519 over canonical JSON."""

from __future__ import annotations

import base64
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from nio.api import Api


def _bytes(unpadded: str) -> bytes:
    return base64.b64decode(unpadded + "=" * (-len(unpadded) % 4))


def verify(obj: dict[str, Any], user_id: str, public_key: str) -> None:
    """Raises InvalidSignature unless `obj` carries a good signature by `public_key`."""
    signature = obj.get("signatures", {}).get(user_id, {}).get(f"ed25519:{public_key}")
    if signature is None:
        raise InvalidSignature(f"not signed by {public_key}")
    signed = {k: v for k, v in obj.items() if k not in ("signatures", "unsigned")}
    key = Ed25519PublicKey.from_public_bytes(_bytes(public_key))
    key.verify(_bytes(signature), Api.to_canonical_json(signed).encode())


def is_cross_signed(keys: dict[str, Any], user_id: str, device_id: str) -> bool:
    """Whether the published keys (a `/keys/query` answer) chain the device to its owner's
    master key: master -> self-signing key -> device. What Element's "exclude insecure
    devices" mode asks of a device before sharing room keys with it."""
    try:
        [master] = keys["master_keys"][user_id]["keys"].values()
        ssk = keys["self_signing_keys"][user_id]
        [ssk_key] = ssk["keys"].values()
        verify(ssk, user_id, master)
        verify(keys["device_keys"][user_id][device_id], user_id, ssk_key)
    except (KeyError, ValueError, InvalidSignature):
        return False
    return True
