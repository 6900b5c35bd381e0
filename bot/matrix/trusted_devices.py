"""The people's devices the bot trusts when `matrix.verified_devices_only` is on: those
their owner cross-signed (device_trust.py decides from `/keys/query`). Their trust is
read once per person and read again when the sync says their devices changed; the room
keys of the bot's messages go only to trusted devices (the others are blacklisted in
nio's store, and a room whose key reached a device no longer trusted gets a new one)."""

from __future__ import annotations

import logging

from nio import AsyncClient

from bot.matrix.cross_signing import call_client_api
from bot.matrix.device_trust import decide_cross_signed, decide_pin, master_key_of

log = logging.getLogger(__name__)


class TrustedDevices:
    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        self._trust: dict[str, dict[str, bool]] = {}
        # Each person's master key as first seen (trust on first use).
        self._pinned: dict[str, str] = {}

    def forget(self, users: list[str]) -> None:
        """Their devices changed (a sync's device_lists): read their trust again."""
        for user in users:
            self._trust.pop(user, None)

    async def trusted(self, user_id: str) -> dict[str, bool]:
        """Each device of the person, and whether its owner cross-signed it."""
        if user_id not in self._trust:
            status, answer = await call_client_api(
                self.client, "keys/query", {"device_keys": {user_id: []}}
            )
            if status != 200:
                return {}  # fail closed: nothing trusted until it can be read
            self._note_master_key(user_id, master_key_of(user_id, answer))
            self._trust[user_id] = decide_cross_signed(user_id, answer)
        return self._trust[user_id]

    def _note_master_key(self, user_id: str, current: str | None) -> None:
        if current is None:
            return
        if decide_pin(self._pinned.get(user_id), current) == "changed":
            log.warning("the cross-signing identity of %s changed: re-pinned", user_id)
        self._pinned[user_id] = current

    def device_of(self, sender: str, sender_key: str | None) -> str | None:
        """The device of a decrypted message, by the curve25519 key it came with."""
        devices = self.client.device_store.active_user_devices(sender) if sender_key else ()
        return next((d.id for d in devices if d.curve25519 == sender_key), None)

    async def guard_room(self, room_id: str, members: list[str]) -> None:
        """Before a message to an encrypted room: its key goes to trusted devices only."""
        revoked = False
        for user in members:
            trust = await self.trusted(user)
            for device in self.client.device_store.active_user_devices(user):
                if trust.get(device.id):
                    if device.blacklisted:
                        self.client.unblacklist_device(device)
                    self.client.verify_device(device)
                elif not device.blacklisted:
                    self.client.blacklist_device(device)
                    revoked = True
        if revoked and self.client.olm is not None:
            # A key shared before with a device no longer trusted is not used again.
            self.client.olm.outbound_group_sessions.pop(room_id, None)
