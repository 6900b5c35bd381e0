"""Settings of the rights checks: the bot's signing keys, and how readers are checked."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from core.config.secrets import existing_file
from core.config.strict import Strict


class SigningKey(Strict):
    """A private key (PEM file) the bot signs reader tokens with; all listed keys are
    published in the JWKS, and the first one signs. Rotate by adding the new key first
    and removing the old one once tokens signed with it have expired."""

    kid: str = Field(min_length=1, max_length=100)
    """The key's id, in each token's header and in the published JWKS."""
    algorithm: Literal["EdDSA", "RS256"] = "EdDSA"
    """EdDSA (an Ed25519 key) or RS256 (an RSA key)."""
    private_key_file: Path
    """The PEM private key, relative to the config file's folder; read again when it is
    written over."""

    @field_validator("private_key_file")
    @classmethod
    def _readable(cls, value: Path, info: ValidationInfo) -> Path:
        return existing_file(value, info, "key file")


class RightsSettings(Strict):
    issuer: str = "knowledge-bot"
    """The `iss` of the tokens."""
    token_lifetime_seconds: int = Field(default=60, ge=5, le=3600)
    """How long a token is valid."""
    signing_keys: tuple[SigningKey, ...] = ()
    cache_seconds: float = Field(default=60, ge=0)
    """How long a yes or no of an application is reused for a (reader, document); a changed or
    deleted document is asked about again at once."""
    check_timeout_seconds: float = Field(default=2.0, gt=0, le=60)
    """How long the bot waits for an application; no answer in time means "no"."""
    readers_per_request: int = Field(default=20, ge=1, le=500)
    """How many readers' tokens go into one request."""
    max_room_members: int = Field(default=50, ge=1)
    """Rooms with more members get public documents only."""


class ReaderMapping(Strict):
    """How a Matrix user becomes a user of a source application.

    `users` is checked first; then `rule`: "localpart" maps `@alice:<homeserver>` to
    `alice` (users of other servers get no mapping), "matrix_id" passes the id through,
    "none" maps nobody. A reader with no mapping sees public documents only.
    """

    rule: Literal["localpart", "matrix_id", "none"] = "none"
    """How a Matrix user not in users is named in the application: their localpart (users
    of homeserver only), their whole Matrix id, or none (no identity there)."""
    homeserver: str = ""
    """The server whose users the localpart rule maps."""
    users: dict[str, str] = Field(default_factory=dict)
    """Explicit mappings of Matrix user ids to the application's user names, tried first."""
