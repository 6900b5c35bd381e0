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
