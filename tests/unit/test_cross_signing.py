"""Cross-signing decisions and signatures (pure): what a start does, and signatures any
client can check."""

from __future__ import annotations

import pytest

from bot.cross_signing import CrossSigningKeys, build_public_keys, build_signed, decide_plan
from tests.support.signatures import verify

PLANS = {
    "first start": (None, None, False, "upload"),
    "keys published by an earlier start of ours": ("M", "M", True, "done"),
    "a new device of ours": ("M", "M", False, "sign_device"),
    "our keys lost with the data folder": ("M", None, False, "upload"),
    "published, never by us, none kept": (None, "M", False, "upload"),
    "replaced by someone else": ("X", "M", True, "replaced_elsewhere"),
}


@pytest.mark.parametrize(("published", "ours", "signed", "plan"), PLANS.values(), ids=PLANS)
def test_decide_plan(published, ours, signed, plan):
    assert decide_plan(published, ours, signed) == plan


def test_the_published_keys_and_a_signed_device_verify_along_the_chain():
    keys = CrossSigningKeys.generate()
    body = build_public_keys("@bot:x", keys)
    verify(body["self_signing_key"], "@bot:x", keys.public("master"))
    verify(body["user_signing_key"], "@bot:x", keys.public("master"))
    device = {"user_id": "@bot:x", "device_id": "D", "keys": {"ed25519:D": "k"},
              "signatures": {"@bot:x": {"ed25519:D": "own"}}, "unsigned": {"name": "bot"}}  # fmt: skip
    signed = build_signed(device, "@bot:x", keys.private["self_signing"])
    verify(signed, "@bot:x", keys.public("self_signing"))
    assert signed["signatures"]["@bot:x"]["ed25519:D"] == "own", "the device's own is kept"
    assert "unsigned" not in signed
