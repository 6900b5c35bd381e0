"""Rooms follow their upgrades. An upgrade (`/rooms/{id}/upgrade`, as room version 12
made many teams do) tombstones the old room and names its successor. The bot then:

- joins the successor (by itself where its join rules let it; else the invite that
  clients send members of the old room is accepted as any invite);
- keeps the link old → new, so that the old room's settings (`[rooms."<old id>"]`), its
  memories, history windows, ledger and written-back summaries reach the successor's
  readers (for as far as they could read the old room: core/rights/readers.py);
- says once, in the old room, where it went, and answers nothing there afterwards.

An upgrade is followed only when its sender is one the bot takes invites from: a
tombstone is a way into another room, so it passes the same allow-list as an invite.

The bot stays a member of the old room: its knowledge is reached through it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.features.upgrades.store import SqlUpgradeStore, decide_predecessors
from bot.inbox.invites import decide_invite
from bot.inbox.links import build_room_link
from bot.inbox.render import build_room_notice
from bot.matrix.account import SEND_ERRORS, MatrixAccount
from bot.matrix.types import SyncBatch
from bot.settings_holder import SettingsHolder
from core import strings
from core.i18n.language import speaking
from core.ids import RoomID, UserID

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Tombstone:
    old: RoomID
    new: RoomID
    # Who upgraded it: their server can serve the new room (ids of version 12 name none).
    sender: str


def parse_tombstones(batch: SyncBatch) -> list[Tombstone]:
    """The upgrades a sync shows: each joined room's `m.room.tombstone` state."""
    found = []
    for room in batch.joined:
        for source in (*room.state, *room.timeline):
            tombstone = parse_tombstone(room.room_id, source)
            if tombstone is not None:
                found.append(tombstone)
    return found


def parse_tombstone(room_id: str, source: Mapping[str, Any]) -> Tombstone | None:
    if source.get("type") != "m.room.tombstone" or source.get("state_key") != "":
        return None
    content = source.get("content")
    new = content.get("replacement_room") if isinstance(content, Mapping) else None
    if not isinstance(new, str) or not new.startswith("!") or new == room_id:
        return None
    return Tombstone(RoomID(room_id), RoomID(new), str(source.get("sender", "")))


class UpgradeFollower:
    def __init__(
        self, matrix: MatrixAccount, store: SqlUpgradeStore, settings: SettingsHolder
    ) -> None:
        self.matrix = matrix
        self.store = store
        self.settings = settings
        self._successors: dict[str, str] = {}

    async def load(self) -> None:
        """The upgrades followed before this start."""
        self._successors = await self.store.successors()
        self.settings.link_rooms(self._successors)

    def replaced(self, room_id: str) -> bool:
        """Whether the room was upgraded into another (the bot answers nothing there)."""
        return room_id in self._successors

    def predecessors(self, room_id: str) -> tuple[RoomID, ...]:
        """The rooms this one replaced, newest first."""
        return decide_predecessors(room_id, self._successors)

    async def observe(self, batch: SyncBatch) -> None:
        """Follow each upgrade the sync shows (once: a restart sees the state again)."""
        for tombstone in parse_tombstones(batch):
            if self._successors.get(tombstone.old) == tombstone.new:
                continue
            await self.follow(tombstone)

    async def follow(self, tombstone: Tombstone) -> None:
        old, new = tombstone.old, tombstone.new
        if not decide_invite(UserID(tombstone.sender), self.settings.current.invites):
            # Following is joining: only where an invite from its sender would be taken.
            log.warning(
                "room %s was upgraded by someone the bot takes no invite from: not followed", old
            )
            return
        await self.store.record_upgrade(old, new, int(time.time() * 1000))
        self._successors[old] = new
        self.settings.link_rooms(self._successors)
        if new not in self.matrix.rooms() and not await self.matrix.join(new):
            log.warning("the upgraded room %s is not joinable yet: an invite is awaited", new)
        log.info("room %s was upgraded into %s: followed", old, new)
        # In the old room's language (a sync has no asker to take one from).
        with speaking(self.settings.current.room(old).language):
            notice = strings.ROOM_UPGRADED.format(link=build_room_link(new, tombstone.sender))
        try:
            await self.matrix.send(old, build_room_notice(notice))
        except SEND_ERRORS as exc:
            # The old room is often closed to members' messages after an upgrade.
            log.info("could not say in %s where the bot went: %s", old, exc)
