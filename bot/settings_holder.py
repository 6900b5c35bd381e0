"""The config in force; replaced as a whole when a valid edit is applied.

A room that was upgraded keeps its settings: each `[rooms."<old id>"]` entry applies to
the room that replaced it (and its successors), unless the config names the new room
itself (`link_rooms`, bot/features/upgrades)."""

from __future__ import annotations

from collections.abc import Mapping

from core.config import Settings


def build_linked_settings(base: Settings, successors: Mapping[str, str]) -> Settings:
    """`base` with each upgraded room's entry given to its successors (old → new) that
    have none of their own."""
    rooms = dict(base.rooms)
    for old in successors:
        entry, new = rooms.get(old), successors.get(old)
        seen = {old}
        while entry is not None and new is not None and new not in seen:
            rooms.setdefault(new, entry)
            entry, seen = rooms[new], seen | {new}
            new = successors.get(new)
    if rooms == base.rooms:
        return base
    return base.model_copy(update={"rooms": rooms})


class SettingsHolder:
    def __init__(self, current: Settings) -> None:
        self._base = current
        self._successors: dict[str, str] = {}
        self._made: Settings | None = None

    @property
    def current(self) -> Settings:
        if self._made is None:
            self._made = build_linked_settings(self._base, self._successors)
        return self._made

    @current.setter
    def current(self, settings: Settings) -> None:
        self._base = settings
        self._made = None

    def link_rooms(self, successors: Mapping[str, str]) -> None:
        """The rooms upgraded so far, old → new: their settings follow them."""
        self._successors = dict(successors)
        self._made = None
