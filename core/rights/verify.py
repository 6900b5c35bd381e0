"""For source applications written in Python: verify a reader token from the bot.

    from core.rights.verify import TokenRejected, verify_reader_token
    claims = verify_reader_token(token, jwks, audience="wiki", issuer="knowledge-bot")
    reader = claims["sub"]

`jwks` is the bot's JWKS document (GET /api/v1/jwks.json), fetched and refreshed by the
application. The signature, the key id, the algorithm of that key, expiry and issue time
(with `leeway` seconds of clock skew), the audience and the issuer are all checked.
"""

from __future__ import annotations

from typing import Any

import jwt

ALGORITHMS = ("EdDSA", "RS256")
REQUIRED = ["iss", "aud", "sub", "iat", "exp", "jti"]


class TokenRejected(Exception):
    """The token must not be trusted; the text says why (for logs)."""


def verify_reader_token(
    token: str, jwks: dict[str, Any], *, audience: str, issuer: str, leeway: float = 10
) -> dict[str, Any]:
    """The token's claims if it is valid for this application, else TokenRejected."""
    try:
        header = jwt.get_unverified_header(token)
        kid = header.get("kid")
        matching = [key for key in jwks.get("keys", []) if key.get("kid") == kid]
        if not kid or len(matching) != 1:
            raise TokenRejected(f"unknown key id {kid!r}")
        algorithm = matching[0].get("alg")
        # The algorithm comes from our key, never from the token: no algorithm confusion.
        if algorithm not in ALGORITHMS or header.get("alg") != algorithm:
            raise TokenRejected(f"algorithm {header.get('alg')!r} does not match the key")
        key = jwt.PyJWK.from_dict(matching[0])
        return jwt.decode(
            token,
            key.key,
            algorithms=[algorithm],
            audience=audience,
            issuer=issuer,
            leeway=leeway,
            options={"require": REQUIRED},
        )
    except jwt.PyJWTError as exc:
        raise TokenRejected(f"{type(exc).__name__}: {exc}") from None
