"""The base of every SQL store: a database, brought up to the store's schema on opening."""

from __future__ import annotations

from typing import ClassVar, Self

from core.storage.database import Database, erase_freed
from core.storage.upgrades import UpgradeTable


class SqlStore:
    upgrades: ClassVar[UpgradeTable]

    def __init__(self, db: Database) -> None:
        self.db = db

    @classmethod
    async def open(cls, db: Database) -> Self:
        """The store on `db`, after applying the upgrades its tables lack."""
        await cls.upgrades.upgrade(db)
        return cls(db)

    async def erase_freed(self) -> None:
        """No copy of deleted rows left in the store's files (see `erase_freed`)."""
        await erase_freed(self.db)
