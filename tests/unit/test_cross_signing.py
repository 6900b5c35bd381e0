"""Cross-signing decisions and signatures (pure): what a start does, and signatures any
client can check."""

from __future__ import annotations

import stat
from dataclasses import replace

import pytest

from bot.matrix.cross_signing import (
    CrossSigningError,
    CrossSigningKeys,
    build_public_keys,
    build_signed,
    decide_plan,
    read_keys,
    write_keys,
)
from tests.support.signatures import verify

PLANS = {
    "first start": (None, None, False, False, "upload"),
    "keys published by an earlier start of ours": ("M", "M", True, True, "done"),
    "a new device of ours": ("M", "M", True, False, "sign_device"),
    "our keys lost with the data folder": ("M", None, False, False, "upload"),
    "ours kept, none on the homeserver": (None, "M", True, False, "upload"),
    "our earlier upload failed (no password yet)": ("X", "M", False, False, "upload"),
    "replaced by someone else": ("X", "M", True, True, "replaced_elsewhere"),
}


@pytest.mark.parametrize(
    ("published", "ours", "ours_published", "signed", "plan"), PLANS.values(), ids=PLANS
)
def test_decide_plan(published, ours, ours_published, signed, plan):
    assert decide_plan(published, ours, signed, ours_published=ours_published) == plan


def test_the_keys_file_is_private_whole_and_remembers_whether_it_was_published(tmp_path):
    path = tmp_path / "cross-signing.json"
    keys = CrossSigningKeys.generate()
    write_keys(path, keys)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = read_keys(path)
    assert again and again.public("master") == keys.public("master") and not again.published
    write_keys(path, replace(keys, published=True))
    assert read_keys(path).published and [p.name for p in tmp_path.iterdir()] == [path.name]
    path.write_text('{"master": "cut sh')
    with pytest.raises(CrossSigningError, match="damaged"):
        read_keys(path)


def test_the_published_keys_and_a_signed_device_verify_along_the_chain():
    keys = CrossSigningKeys.generate()
    body = build_public_keys("@bot:x", keys)
    verify(body["self_signing_key"], "@bot:x", keys.public("master"))
    verify(body["user_signing_key"], "@bot:x", keys.public("master"))
    device = {
        "user_id": "@bot:x",
        "device_id": "D",
        "keys": {"ed25519:D": "k"},
        "signatures": {"@bot:x": {"ed25519:D": "own"}},
        "unsigned": {"name": "bot"},
    }
    signed = build_signed(device, "@bot:x", keys.private["self_signing"])
    verify(signed, "@bot:x", keys.public("self_signing"))
    assert signed["signatures"]["@bot:x"]["ed25519:D"] == "own", "the device's own is kept"
    assert "unsigned" not in signed
