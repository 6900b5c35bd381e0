"""The passphrase that locks the bot's encryption keys in matrix-nio's store (nio calls
it the pickle key).

nio keeps the Olm account and the Olm and Megolm sessions in its SQLite store, pickled
and encrypted with this passphrase. Given none, nio uses "DEFAULT_KEY", so whoever reads
the store, or a log that printed its SQL, has the bot's keys and can read its rooms.

The key is `matrix.pickle_key_env` (or `matrix.pickle_key`); without one, a random key is
generated once into the data folder (readable by the bot's account only), which keeps the
local demo and the tests working, with a warning that recommends the variable.

A store locked with another key does not open: nio's `restore_login` raises vodozemac's
LibolmPickleException ("MAC tag mismatch") and the bot would not start. So before nio
opens a device's store, `unlock_store` tries the keys that may have locked it:
- a store that an older key opens (nio's DEFAULT_KEY, used by every earlier version of the
  bot; or the generated key file, once the config names a key) is re-locked with the
  current key in one transaction: an upgrade keeps its device, sessions and room keys;
- a store that no known key opens is left on disk untouched, and the caller starts a new
  device (the old one's keys are unreadable without its key anyway).
"""

from __future__ import annotations

import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from nio.store import DefaultStore, MatrixStore
from vodozemac import LibolmPickleException, PickleException

log = logging.getLogger(__name__)

KEY_FILE = "pickle-key"
# What nio locks a store with when no key is given: every store of earlier versions.
NIO_DEFAULT_KEY = "DEFAULT_KEY"


@dataclass(frozen=True)
class StoreKeys:
    current: str
    # Keys that may have locked an existing store, tried in this order after `current`.
    older: tuple[str, ...]


def store_keys(configured: str | None, data_dir: Path) -> StoreKeys:
    """The key to lock the store with: the configured one, else the data folder's (made
    on first use)."""
    key_file = data_dir / KEY_FILE
    kept = _read_key(key_file)
    if configured:
        older = tuple(key for key in (kept, NIO_DEFAULT_KEY) if key and key != configured)
        return StoreKeys(configured, older)
    if kept is None:
        kept = _generate_key(key_file)
        log.warning(
            "no matrix.pickle_key_env is configured: the passphrase that locks the "
            "encryption keys was generated into %s, next to the keys it locks; set "
            "matrix.pickle_key_env to keep it out of the data folder",
            key_file,
        )
    return StoreKeys(kept, (NIO_DEFAULT_KEY,))


def _read_key(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        return None


def _generate_key(path: Path) -> str:
    """A random key, written whole (0600) before it locks anything: a crash while writing
    leaves no half key that would lock the store for good."""
    key = secrets.token_urlsafe(32)
    draft = path.with_name(path.name + ".new")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(key + "\n")
        file.flush()
        os.fsync(file.fileno())
    os.replace(draft, path)
    return key


def unlock_store(store_dir: Path, user_id: str, device_id: str, keys: StoreKeys) -> bool:
    """Whether nio can open this device's store with `keys.current`, re-locking it first
    when an older key opens it. False when no known key does (the store is left as is)."""
    if not (store_dir / f"{user_id}_{device_id}.db").exists():
        return True
    store = DefaultStore(user_id, device_id, str(store_dir), keys.current)
    try:
        for key in (keys.current, *keys.older):
            store.pickle_key = key
            if _opens(store):
                if key != keys.current:
                    _relock(store, keys.current)
                    log.warning(
                        "the encryption keys of device %s were locked with an older "
                        "passphrase; they are now locked with the current pickle key",
                        device_id,
                    )
                return True
    finally:
        store.database.close()
    log.warning(
        "the encryption store of device %s (%s) does not open with the pickle key; "
        "it is kept as it is, and the bot starts a new device",
        device_id,
        store.database_path,
    )
    return False


def _opens(store: MatrixStore) -> bool:
    try:
        store.load_account()
    except (PickleException, LibolmPickleException):
        return False
    return True


def _relock(store: MatrixStore, key: str) -> None:
    """Pickle the account and sessions again with `key`, all or nothing."""
    account = store.load_account()
    if account is None:
        return
    sessions = store.load_sessions()
    group_sessions = store.load_inbound_group_sessions()
    store.pickle_key = key
    with store.database.atomic():
        store.save_account(account)
        for sender_key, sessions_of_sender in sessions.items():
            for session in sessions_of_sender:
                store.save_session(sender_key, session)
        for group_session in group_sessions:
            store.save_inbound_group_session(group_session)
