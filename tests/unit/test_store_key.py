"""The pickle key: where it comes from, and stores locked with another key (matrix-nio's
real SQLite store, real vodozemac pickles)."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest
from nio.crypto import InboundGroupSession, OlmAccount, OutboundGroupSession, OutboundSession
from nio.store import DefaultStore
from vodozemac import LibolmPickleException

from bot.matrix.store_key import KEY_FILE, NIO_DEFAULT_KEY, StoreKeys, store_keys, unlock_store

USER, DEVICE, ROOM = "@bot:example.org", "BOTDEVICE", "!room"
CONFIGURED = "a configured passphrase, long enough"


def test_without_a_configured_key_one_is_generated_once_private_and_not_logged(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        first = store_keys(None, tmp_path)
    key_file = tmp_path / KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert key_file.read_text().strip() == first.current and len(first.current) >= 32
    assert first.older == (NIO_DEFAULT_KEY,), "a store of an earlier version is re-locked"
    assert "pickle_key_env" in caplog.text and first.current not in caplog.text
    assert store_keys(None, tmp_path) == first
    assert store_keys(None, tmp_path / "other").current != first.current


def test_a_configured_key_wins_and_the_generated_one_becomes_an_older_key(tmp_path):
    assert store_keys(CONFIGURED, tmp_path) == StoreKeys(CONFIGURED, (NIO_DEFAULT_KEY,))
    assert not (tmp_path / KEY_FILE).exists(), "nothing is generated when a key is given"
    generated = store_keys(None, tmp_path).current
    assert store_keys(CONFIGURED, tmp_path) == StoreKeys(CONFIGURED, (generated, NIO_DEFAULT_KEY))


def locked_store(folder: Path, key: str) -> tuple[str, str, str]:
    """A store with an account, an Olm session and a Megolm session, pickled with `key`;
    returns the account's identity key and the two sessions' ids."""
    store = DefaultStore(USER, DEVICE, str(folder), key)
    account, peer = OlmAccount(), OlmAccount()
    peer.generate_one_time_keys(1)
    one_time_key = next(iter(peer.one_time_keys["curve25519"].values()))
    olm = OutboundSession(account, peer.identity_keys["curve25519"], one_time_key)
    outbound = OutboundGroupSession()
    megolm = InboundGroupSession(
        outbound.session_key, "signing-key", account.identity_keys["curve25519"], ROOM
    )
    store.save_account(account)
    store.save_session("peer-curve-key", olm)
    store.save_inbound_group_session(megolm)
    store.database.close()
    return account.identity_keys["curve25519"], olm.id, megolm.id


def opened(folder: Path, key: str) -> tuple[str, list[str], list[str]]:
    store = DefaultStore(USER, DEVICE, str(folder), key)
    try:
        account = store.load_account()
        assert account is not None
        olm = [session.id for session in store.load_sessions()]
        megolm = [session.id for session in store.load_inbound_group_sessions()]
        return account.identity_keys["curve25519"], olm, megolm
    finally:
        store.database.close()


def test_nio_cannot_open_a_store_with_another_key(tmp_path):
    locked_store(tmp_path, NIO_DEFAULT_KEY)
    with pytest.raises(LibolmPickleException, match="MAC"):
        opened(tmp_path, CONFIGURED)


def test_a_store_of_an_earlier_version_is_relocked_keeping_account_and_sessions(tmp_path):
    identity, olm_id, megolm_id = locked_store(tmp_path, NIO_DEFAULT_KEY)
    keys = StoreKeys(CONFIGURED, ("generated key file", NIO_DEFAULT_KEY))
    assert unlock_store(tmp_path, USER, DEVICE, keys)
    assert opened(tmp_path, CONFIGURED) == (identity, [olm_id], [megolm_id])
    with pytest.raises(LibolmPickleException):
        opened(tmp_path, NIO_DEFAULT_KEY)
    assert unlock_store(tmp_path, USER, DEVICE, keys), "a re-locked store opens at once"


def test_a_store_no_known_key_opens_is_left_untouched(tmp_path, caplog):
    locked_store(tmp_path, "a key that nobody remembers")
    database = tmp_path / f"{USER}_{DEVICE}.db"
    before = database.read_bytes()
    with caplog.at_level(logging.WARNING):
        assert not unlock_store(tmp_path, USER, DEVICE, StoreKeys(CONFIGURED, (NIO_DEFAULT_KEY,)))
    assert database.read_bytes() == before
    assert "starts a new device" in caplog.text and CONFIGURED not in caplog.text


def test_a_device_without_a_store_needs_nothing(tmp_path):
    assert unlock_store(tmp_path, USER, DEVICE, StoreKeys(CONFIGURED, (NIO_DEFAULT_KEY,)))
    assert list(tmp_path.iterdir()) == []
