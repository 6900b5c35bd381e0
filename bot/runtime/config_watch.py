"""Applying config edits while the bot runs: on a file change and on SIGHUP."""

from __future__ import annotations

import asyncio
import logging
import re
import signal
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from watchfiles import awatch

from bot.logs import apply_log_level
from bot.runtime.admin_reports import decide_admin_language
from bot.settings_holder import SettingsHolder
from core import strings
from core.config import ConfigError, Settings, decide_restart_only_changes, parse_config
from core.config.load import parse_config_text
from core.config.model import RESTART_ONLY_KEYS, RESTART_ONLY_SECTIONS
from core.i18n.language import speaking
from core.rights.gaps import build_unshown_notices, decide_unshown_collections

log = logging.getLogger(__name__)
# How long an edit that drops whole sections must leave the file unchanged to count.
STABLE_SECONDS = 1.0

Report = Callable[[str], Awaitable[None]]


def build_applied(old: Settings, new: Settings) -> tuple[Settings, list[str]]:
    """The config to run after a valid edit, and the edited keys that need a restart.

    Keys that cannot change live keep their running values, so later edits still
    report them until the bot restarts.
    """
    restart_keys = decide_restart_only_changes(old, new)
    kept = {section: getattr(old, section) for section in RESTART_ONLY_SECTIONS}
    for section, key in RESTART_ONLY_KEYS:
        kept[section] = kept.get(section, getattr(new, section)).model_copy(
            update={key: getattr(getattr(old, section), key)}
        )
    return new.model_copy(update=kept), restart_keys


def decide_dropped(old: Settings, new: Settings) -> list[str]:
    """What the running config uses that the edit takes away whole: collections, sources,
    rooms and the model endpoint. A file cut short while it is written looks like this."""
    dropped = [
        f"{section}.{name}"
        for section in ("collections", "sources", "rooms")
        for name in getattr(old, section)
        if name not in getattr(new, section)
    ]
    if old.llm.url and not new.llm.url:
        dropped.append("llm.url")
    return dropped


class ConfigWatcher:
    def __init__(
        self, path: Path, env: Mapping[str, str], holder: SettingsHolder, report: Report
    ) -> None:
        self.path = path
        self.env = env
        self.holder = holder
        self.report = report
        self._lock = asyncio.Lock()
        # What the admin room was last told that a file like the running config puts
        # right: a rejected edit, or keys that wait for a restart.
        self._owed: str | None = None
        self._signalled: set[asyncio.Task[bool]] = set()

    async def reload(self) -> bool:
        """Validate the file and apply it; an invalid file changes nothing. The catch-all
        of config edits: nothing an admin writes may stop the bot."""
        async with self._lock:
            with speaking(decide_admin_language(self.holder.current)):
                try:
                    return await self._reload()
                except Exception:
                    reference = uuid.uuid4().hex[:8]
                    log.exception("applying a config edit failed (reference %s)", reference)
                    await self.report(strings.CONFIG_RELOAD_FAILED.format(reference=reference))
                    return False

    async def _reload(self) -> bool:
        try:
            data = await asyncio.to_thread(self.path.read_bytes)
            new = parse_config(
                parse_config_text(data, str(self.path)),
                origin=str(self.path),
                env=self.env,
                base_dir=self.path.parent.resolve(),
            )
        except OSError as exc:
            problems = [f"{self.path}: cannot be read: {exc.strerror}"]
            return await self._reject(ConfigError(problems))
        except ConfigError as exc:
            return await self._reject(exc)
        dropped = decide_dropped(self.holder.current, new)
        if dropped and not await self._unchanged_for_a_moment(data):
            log.info(
                "the config file drops %s and is still being written; waiting for it",
                ", ".join(dropped),
            )
            return False
        return await self._apply(new)

    async def _unchanged_for_a_moment(self, data: bytes) -> bool:
        """A half-written file is never applied: an edit that takes whole sections away
        counts only once the file stays the same for a moment (a later write of the
        file brings its own reload)."""
        await asyncio.sleep(STABLE_SECONDS)
        try:
            return await asyncio.to_thread(self.path.read_bytes) == data
        except OSError:
            return False

    async def _reject(self, exc: ConfigError) -> bool:
        log.error("config edit rejected, keeping the running config:\n%s", exc)
        self._owed = strings.CONFIG_VALID_AGAIN
        await self.report(
            strings.CONFIG_REJECTED.format(problems=build_admin_problems(exc.problems))
        )
        return False

    async def _apply(self, new: Settings) -> bool:
        applied, restart_keys = build_applied(self.holder.current, new)
        if applied == self.holder.current and not restart_keys:
            # An edit put right again is confirmed once: after a warning, silence reads
            # as still broken.
            if self._owed is not None:
                await self.report(self._owed)
                self._owed = None
            return True
        restart_was_owed = self._owed == strings.CONFIG_RESTART_NOT_NEEDED
        self._owed = strings.CONFIG_RESTART_NOT_NEEDED if restart_keys else None
        level_changed = applied.bot.log_level != self.holder.current.bot.log_level
        unshown = decide_unshown_collections(applied)
        newly_unshown = unshown != decide_unshown_collections(self.holder.current)
        self.holder.current = applied
        if level_changed:
            apply_log_level(applied.bot.log_level)
        log.info("config reloaded from %s", self.path)
        if restart_keys:
            log.warning("these settings need a restart: %s", ", ".join(restart_keys))
            await self.report(strings.CONFIG_NEEDS_RESTART.format(keys=", ".join(restart_keys)))
        else:
            await self.report(strings.CONFIG_APPLIED)
            if restart_was_owed:  # the restart-only keys were put back with it
                await self.report(strings.CONFIG_RESTART_NOT_NEEDED)
        if newly_unshown and unshown:
            # Valid, applied, and yet a collection's documents can never be shown: said
            # beside "applied", or the admin debugs their application instead.
            for why, names in unshown.items():
                log.warning("the documents of %s are never shown (%s)", ", ".join(names), why)
            for notice in build_unshown_notices(applied):
                await self.report(notice)
        return True

    async def watch(self) -> None:
        """Reload whenever the file is written (editors often replace it, so watch its folder)."""
        folder = self.path.parent.resolve()
        name = self.path.name
        async for _ in awatch(
            folder,
            watch_filter=lambda _change, changed: Path(changed).name == name,
            recursive=False,
        ):
            await self.reload()

    def reload_on_sighup(self) -> None:
        loop = asyncio.get_running_loop()

        def on_sighup() -> None:
            task = loop.create_task(self.reload())
            self._signalled.add(task)
            task.add_done_callback(self._signalled.discard)

        loop.add_signal_handler(signal.SIGHUP, on_sighup)


# An absolute path: a slash, then folders, then the file's name.
ABSOLUTE_PATH = re.compile(r"(?<![\w.~:/])/(?:[^\s/:'\"`]+/)*([^\s/:'\"`]+)")


def build_admin_problems(problems: list[str]) -> str:
    """The problems as a list for the admin room, each file named without its folders:
    the host's layout is not the room's business (the log has the full paths)."""
    names_only = (ABSOLUTE_PATH.sub(r"\1", problem) for problem in problems)
    return "\n".join(f"- `{problem}`" for problem in names_only)
