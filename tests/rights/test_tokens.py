"""Reader tokens: what the bot signs, and what the verification helper refuses."""

from __future__ import annotations

import time

import jwt
import pytest

from core.config import parse_config
from core.config.rights import RightsSettings, SigningKey
from core.rights.cache import DecisionCache
from core.rights.checker import RightsChecker
from core.rights.tokens import KeyProblem, TokenSigner
from core.rights.verify import TokenRejected, verify_reader_token
from tests.rights.conftest import keys_toml, write_key


def signer(tmp_path, *keys: tuple[str, str], lifetime: int = 60) -> TokenSigner:
    listed = tuple(
        SigningKey(kid=kid, algorithm=alg, private_key_file=write_key(tmp_path / f"{kid}.pem", alg))
        for kid, alg in keys
    )
    return TokenSigner(RightsSettings(signing_keys=listed, token_lifetime_seconds=lifetime))


def verify(token, jwks, audience="wiki"):
    return verify_reader_token(token, jwks, audience=audience, issuer="knowledge-bot")


@pytest.mark.parametrize("algorithm", ["EdDSA", "RS256"])
def test_a_token_carries_every_claim_and_verifies(tmp_path, algorithm):
    bot = signer(tmp_path, ("k1", algorithm))
    token = bot.sign("wiki", "alice")
    assert jwt.get_unverified_header(token) == {"alg": algorithm, "kid": "k1", "typ": "JWT"}
    claims = verify(token, bot.jwks())
    assert claims["sub"] == "alice" and claims["aud"] == "wiki" and claims["iss"] == "knowledge-bot"
    assert claims["exp"] - claims["iat"] == 60 and len(claims["jti"]) == 32
    assert verify(bot.sign("wiki", "alice"), bot.jwks())["jti"] != claims["jti"]


REJECTED = [
    "expired",
    "signed with another key",
    "for another audience",
    "not signed at all",
    "garbage",
]


@pytest.mark.parametrize("case", REJECTED)
def test_the_helper_rejects_bad_tokens(tmp_path, case):
    bot = signer(tmp_path, ("k1", "EdDSA"))
    impostor = signer(tmp_path / "..", ("k1", "EdDSA"))  # the same kid, another key
    token = {
        "expired": lambda: bot.sign("wiki", "alice", now=time.time() - 600),
        "signed with another key": lambda: impostor.sign("wiki", "alice"),
        "for another audience": lambda: bot.sign("tracker", "alice"),
        "not signed at all": lambda: jwt.encode(
            {"sub": "alice", "aud": "wiki"}, None, algorithm="none"
        ),
        "garbage": lambda: "not.a.token",
    }[case]()
    with pytest.raises(TokenRejected):
        verify(token, bot.jwks())


def test_a_token_replayed_to_another_application_or_issuer_is_rejected(tmp_path):
    bot = signer(tmp_path, ("k1", "EdDSA"))
    token = bot.sign("wiki", "alice")
    assert verify(token, bot.jwks())["sub"] == "alice"
    with pytest.raises(TokenRejected, match="Audience"):
        verify(token, bot.jwks(), audience="tracker")
    with pytest.raises(TokenRejected, match="issuer"):
        verify_reader_token(token, bot.jwks(), audience="wiki", issuer="someone-else")


def test_small_clock_skew_is_tolerated(tmp_path):
    bot = signer(tmp_path, ("k1", "EdDSA"), lifetime=5)
    just_expired = bot.sign("wiki", "alice", now=time.time() - 8)
    assert verify(just_expired, bot.jwks())["sub"] == "alice"


def test_rotation_with_two_keys_live(tmp_path):
    old = signer(tmp_path, ("old", "EdDSA"))
    rotated = TokenSigner(
        RightsSettings(
            signing_keys=(
                SigningKey(kid="new", private_key_file=write_key(tmp_path / "new.pem")),
                SigningKey(kid="old", private_key_file=tmp_path / "old.pem"),
            )
        )
    )
    jwks = rotated.jwks()
    assert [key["kid"] for key in jwks["keys"]] == ["new", "old"]
    assert verify(old.sign("wiki", "alice"), jwks)["sub"] == "alice"
    assert jwt.get_unverified_header(rotated.sign("wiki", "bob"))["kid"] == "new"
    retired = TokenSigner(
        RightsSettings(
            signing_keys=rotated.__class__.__init__
            and (SigningKey(kid="new", private_key_file=tmp_path / "new.pem"),)
        )
    )
    with pytest.raises(TokenRejected, match="unknown key id"):
        verify(old.sign("wiki", "alice"), retired.jwks())


def test_unusable_keys_are_named(tmp_path):
    (tmp_path / "bad.pem").write_text("not a key")
    with pytest.raises(KeyProblem, match=r"bad\.pem"):
        TokenSigner(
            RightsSettings(
                signing_keys=(SigningKey(kid="k", private_key_file=tmp_path / "bad.pem"),)
            )
        )
    with pytest.raises(KeyProblem, match="not a key for RS256"):
        TokenSigner(
            RightsSettings(
                signing_keys=(
                    SigningKey(
                        kid="k", algorithm="RS256", private_key_file=write_key(tmp_path / "ed.pem")
                    ),
                )
            )
        )


def test_a_live_edit_of_the_rights_section_signs_with_what_it_says(tmp_path):
    """The checker signs with the config in force: a new key or issuer applies at once."""
    one, two = write_key(tmp_path / "one.pem"), write_key(tmp_path / "two.pem")

    def config(kid: str, key, issuer: str):
        text = (
            '[matrix]\nhomeserver = "http://127.0.0.1:1"\nuser_id = "@bot:x"\npassword_env = "P"\n'
            f'[rights]\nissuer = "{issuer}"\n' + keys_toml((kid, "EdDSA", key))
        )
        return parse_config(text, origin="bot.toml", env={"P": "x"}, base_dir=tmp_path)

    current = [config("one", one, "bot-a")]
    checker = RightsChecker(lambda: current[0], DecisionCache(), lambda: None)
    assert checker.signer is not None
    first = checker.signer.sign("wiki", "alice")
    assert jwt.get_unverified_header(first)["kid"] == "one"

    current[0] = config("two", two, "bot-b")
    assert checker.signer is not None
    second = checker.signer.sign("wiki", "alice")
    assert jwt.get_unverified_header(second)["kid"] == "two"
    assert jwt.decode(second, options={"verify_signature": False})["iss"] == "bot-b"
    assert [key["kid"] for key in checker.signer.jwks()["keys"]] == ["two"]


def test_a_key_file_replaced_in_place_is_read_again(tmp_path):
    """Rotating a key by writing the new one over the old file (same path, same config)
    signs with the new key from the next token on."""
    key = write_key(tmp_path / "signing.pem")
    text = (
        '[matrix]\nhomeserver = "http://127.0.0.1:1"\nuser_id = "@bot:x"\npassword_env = "P"\n'
        "[rights]\n" + keys_toml(("k", "EdDSA", key))
    )
    settings = parse_config(text, origin="bot.toml", env={"P": "x"}, base_dir=tmp_path)
    now = [0.0]
    checker = RightsChecker(lambda: settings, DecisionCache(), lambda: None, clock=lambda: now[0])
    assert checker.signer is not None
    before = checker.signer.jwks()
    write_key(tmp_path / "signing.pem.new")
    (tmp_path / "signing.pem.new").replace(key)  # as an admin's script would
    now[0] += 1  # the files are looked at once a second
    assert checker.signer is not None
    after = checker.signer.jwks()
    assert after != before
    verify(checker.signer.sign("wiki", "alice"), after)
