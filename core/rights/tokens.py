"""Short-lived signed tokens (JWT) that tell a source application who will read an answer."""

from __future__ import annotations

import time
import uuid
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from jwt.algorithms import OKPAlgorithm, RSAAlgorithm

from core.config.rights import RightsSettings


class KeyProblem(Exception):
    """A signing key file that cannot be used; the text names the file."""


def _load(path, algorithm: str) -> Any:
    try:
        key = load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise KeyProblem(f"{path}: not a readable PEM private key ({exc})") from None
    expected = Ed25519PrivateKey if algorithm == "EdDSA" else RSAPrivateKey
    if not isinstance(key, expected):
        raise KeyProblem(f"{path}: not a key for {algorithm}")
    return key


class TokenSigner:
    """Signs with the first configured key; publishes every configured key."""

    def __init__(self, settings: RightsSettings) -> None:
        if not settings.signing_keys:
            raise KeyProblem("no [[rights.signing_keys]] configured")
        self.issuer = settings.issuer
        self.lifetime = settings.token_lifetime_seconds
        self._keys = [
            (key.kid, key.algorithm, _load(key.private_key_file, key.algorithm))
            for key in settings.signing_keys
        ]

    def sign(self, audience: str, subject: str, now: float | None = None) -> str:
        kid, algorithm, key = self._keys[0]
        issued = int(now if now is not None else time.time())
        claims = {
            "iss": self.issuer,
            "aud": audience,
            "sub": subject,
            "iat": issued,
            "exp": issued + self.lifetime,
            "jti": uuid.uuid4().hex,
        }
        return jwt.encode(claims, key, algorithm=algorithm, headers={"kid": kid})

    def jwks(self) -> dict[str, Any]:
        """The public keys as a JWKS document, for applications to verify tokens with."""
        keys = []
        for kid, algorithm, key in self._keys:
            converter = OKPAlgorithm if algorithm == "EdDSA" else RSAAlgorithm
            jwk = converter.to_jwk(key.public_key(), as_dict=True)
            keys.append({**jwk, "kid": kid, "alg": algorithm, "use": "sig"})
        return {"keys": keys}
