"""Which devices their owner cross-signed (bot/matrix/device_trust.py), from keys signed
the way clients sign them (the bot's own cross-signing code signs them here)."""

from __future__ import annotations

from bot.matrix.cross_signing import CrossSigningKeys, build_public_keys, build_signed
from bot.matrix.device_trust import decide_cross_signed, decide_pin, master_key_of

ALICE = "@alice:hs"


def device(device_id: str) -> dict:
    return {
        "user_id": ALICE,
        "device_id": device_id,
        "algorithms": ["m.megolm.v1.aes-sha2"],
        "keys": {f"ed25519:{device_id}": "abc", f"curve25519:{device_id}": "def"},
    }


def answer(keys: CrossSigningKeys, devices: dict, *, ssk_signed: bool = True) -> dict:
    published = build_public_keys(ALICE, keys)
    if not ssk_signed:
        published["self_signing_key"].pop("signatures")
    return {
        "device_keys": {ALICE: devices},
        "master_keys": {ALICE: published["master_key"]},
        "self_signing_keys": {ALICE: published["self_signing_key"]},
    }


def test_only_devices_signed_by_the_owners_self_signing_key_count():
    keys, other = CrossSigningKeys.generate(), CrossSigningKeys.generate()
    signed = build_signed(device("SIGNED"), ALICE, keys.private["self_signing"])
    forged = build_signed(device("FORGED"), ALICE, other.private["self_signing"])
    tampered = {**signed, "device_id": "TAMPERED"}
    devices = {"SIGNED": signed, "FORGED": forged, "PLAIN": device("PLAIN"), "TAMPERED": tampered}
    found = decide_cross_signed(ALICE, answer(keys, devices))
    assert found == {"SIGNED": True, "FORGED": False, "PLAIN": False, "TAMPERED": False}


def test_a_self_signing_key_the_master_did_not_sign_counts_for_nothing():
    keys = CrossSigningKeys.generate()
    signed = build_signed(device("D1"), ALICE, keys.private["self_signing"])
    assert decide_cross_signed(ALICE, answer(keys, {"D1": signed}, ssk_signed=False)) == {
        "D1": False
    }
    assert decide_cross_signed(ALICE, {"device_keys": {ALICE: {"D1": device("D1")}}}) == {
        "D1": False
    }, "no cross-signing at all"


def test_the_master_key_is_pinned_and_a_change_is_noticed():
    keys = CrossSigningKeys.generate()
    current = master_key_of(ALICE, answer(keys, {}))
    assert current == keys.public("master")
    assert decide_pin(None, current) == "pinned"
    assert decide_pin(current, current) == "same"
    assert decide_pin(current, CrossSigningKeys.generate().public("master")) == "changed"
