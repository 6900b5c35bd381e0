"""Scheduled catch-ups (`!catchup every weekday 9:00`): kept durably per person, each
run claimed with a compare-and-set on its time, so that a run is delivered once even
across a restart or with two processes; a run missed while the bot was away comes once,
at the start."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from bot.matrix.account import SEND_ERRORS
from bot.matrix.types import InviteRefused
from core import strings
from core.catchup.digest_schedule import DigestSchedule, decide_next_run
from core.storage.database import StorageError
from core.storage.store import SqlStore
from core.storage.upgrades import Upgrade, UpgradeTable

log = logging.getLogger(__name__)
CHECK_EVERY_SECONDS = 5

V1 = """
CREATE TABLE IF NOT EXISTS digests (
    user_id TEXT PRIMARY KEY, days TEXT NOT NULL, hour INTEGER NOT NULL,
    minute INTEGER NOT NULL, seconds INTEGER, timezone TEXT NOT NULL,
    next_run DOUBLE PRECISION NOT NULL, last_run DOUBLE PRECISION NOT NULL
);
"""
# The language the person asked for it in (NULL: English, as before languages).
V2 = "ALTER TABLE digests ADD COLUMN language TEXT"
# Why it is paused (a key of PAUSE_REASONS; NULL: it runs): the person's private chat
# could not be made (they block invites).
V3 = "ALTER TABLE digests ADD COLUMN paused TEXT"
UPGRADES = UpgradeTable(
    "digests",
    [
        Upgrade("scheduled catch-ups per person", V1, V1),
        Upgrade("each in its person's language", V2, V2),
        Upgrade("paused when it cannot be delivered", V3, V3),
    ],
)
PauseReason = Literal["invites_blocked", "invite_refused"]


def describe_pause(reason: PauseReason | str) -> str:
    """Why a digest is paused, in the language being spoken."""
    if reason == "invites_blocked":
        return strings.PRIVATE_CHAT_BLOCKED
    return strings.PRIVATE_CHAT_REFUSED


@dataclass(frozen=True)
class Digest:
    user_id: str
    schedule: DigestSchedule
    timezone: str
    next_run: float
    last_run: float  # when the previous digest was due (what it covered up to)
    # The language it is written in: the one it was asked for in; None: English.
    language: str | None = None
    # Why it does not run now; None: it runs.
    paused: PauseReason | None = None


class DigestStore(Protocol):
    async def set_digest(self, digest: Digest) -> None: ...
    async def remove_digest(self, user_id: str) -> bool: ...
    async def due_digests(self, now: float) -> list[Digest]: ...
    async def claim_digest(self, user_id: str, due: float, following: float) -> bool: ...
    async def mark_delivered(self, user_id: str, due: float) -> None: ...
    async def pause_digest(self, user_id: str, reason: PauseReason) -> None: ...
    async def resume_digest(self, user_id: str) -> bool: ...
    async def digest_of(self, user_id: str) -> Digest | None: ...


class SqlDigestStore(SqlStore):
    upgrades = UPGRADES

    async def set_digest(self, digest: Digest) -> None:
        s = digest.schedule
        await self.db.execute(
            "INSERT INTO digests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user_id)"
            " DO UPDATE SET days = excluded.days, hour = excluded.hour,"
            " minute = excluded.minute, seconds = excluded.seconds,"
            " timezone = excluded.timezone, next_run = excluded.next_run,"
            " last_run = excluded.last_run, language = excluded.language,"
            " paused = excluded.paused",
            digest.user_id,
            ",".join(map(str, s.days)),
            s.hour,
            s.minute,
            s.seconds,
            digest.timezone,
            digest.next_run,
            digest.last_run,
            digest.language,
            digest.paused,
        )

    async def remove_digest(self, user_id: str) -> bool:
        return await self.db.execute("DELETE FROM digests WHERE user_id = ?", user_id) > 0

    async def due_digests(self, now: float) -> list[Digest]:
        rows = await self.db.fetch(
            "SELECT * FROM digests WHERE next_run <= ? AND paused IS NULL", now
        )
        return [_digest(row) for row in rows]

    async def pause_digest(self, user_id: str, reason: PauseReason) -> None:
        """Stop the person's digest until it is resumed (or set again)."""
        await self.db.execute("UPDATE digests SET paused = ? WHERE user_id = ?", reason, user_id)

    async def resume_digest(self, user_id: str) -> bool:
        """Run a paused digest again; whether it was paused."""
        return (
            await self.db.execute(
                "UPDATE digests SET paused = NULL WHERE user_id = ? AND paused IS NOT NULL",
                user_id,
            )
            > 0
        )

    async def digest_of(self, user_id: str) -> Digest | None:
        rows = await self.db.fetch("SELECT * FROM digests WHERE user_id = ?", user_id)
        return _digest(rows[0]) if rows else None

    async def claim_digest(self, user_id: str, due: float, following: float) -> bool:
        """Take the run due at `due` (the next one becomes `following`); False when
        another process or an earlier run took it. What it covers moves on only once it
        is delivered (`mark_delivered`)."""
        moved = await self.db.execute(
            "UPDATE digests SET next_run = ? WHERE user_id = ? AND next_run = ?",
            following,
            user_id,
            due,
        )
        return moved == 1

    async def mark_delivered(self, user_id: str, due: float) -> None:
        """The run due at `due` was delivered: the next one starts from there."""
        await self.db.execute(
            "UPDATE digests SET last_run = ? WHERE user_id = ? AND last_run < ?",
            due,
            user_id,
            due,
        )


def _digest(row: Sequence[Any]) -> Digest:
    user_id, days, hour, minute, seconds, timezone, next_run, last_run, language, paused = row
    schedule = DigestSchedule(tuple(int(d) for d in days.split(",") if d), hour, minute, seconds)
    return Digest(user_id, schedule, timezone, float(next_run), float(last_run), language, paused)


class Deliver(Protocol):
    async def __call__(self, digest: Digest) -> None: ...


async def run_digests(
    store: DigestStore, deliver: Deliver, report: Callable[[str], None] = lambda text: None
) -> None:
    """Deliver the digests that are due, every few seconds, until cancelled. A failed
    delivery is logged; its run is not repeated, and the next one covers its messages
    (as after a crash between the claim and the delivery). One that cannot reach its
    person (they block the bot's invites) is paused, with the reason `!catchup` shows,
    and `report`ed to the admins."""
    while True:
        now = time.time()
        try:
            due = await store.due_digests(now)
        except StorageError as exc:
            log.warning("digests wait for the store: %s", exc)
            due = []
        for digest in due:
            following = decide_next_run(digest.schedule, max(now, digest.next_run), digest.timezone)
            if not await store.claim_digest(digest.user_id, digest.next_run, following):
                continue
            try:
                await deliver(digest)
            except InviteRefused as exc:
                reason: PauseReason = "invites_blocked" if exc.blocked else "invite_refused"
                await store.pause_digest(digest.user_id, reason)
                log.warning("a digest is paused: its person's private chat could not be made")
                report(
                    strings.DIGEST_PAUSED_REPORT.format(
                        user=digest.user_id, reason=describe_pause(reason)
                    )
                )
                continue
            except SEND_ERRORS as exc:
                log.warning("a digest could not be delivered: %s", exc)
                continue
            except Exception:
                # One person's digest must not stop the others'; the next run covers
                # its messages.
                log.exception("a digest failed")
                continue
            try:
                await store.mark_delivered(digest.user_id, digest.next_run)
            except StorageError as exc:
                log.warning("a digest was delivered, not marked so (the next repeats it): %s", exc)
        await asyncio.sleep(CHECK_EVERY_SECONDS)
