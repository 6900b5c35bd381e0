"""Reading the TOML config file into Settings, with errors that name the file and key."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from core.config.model import RESTART_ONLY_KEYS, RESTART_ONLY_SECTIONS, Settings

# Set by deployments that run several processes on one config (deploy/compose/scale.yaml):
# each process's own SQLite files would split the inbox, the catalog and the leases.
SEVERAL_PROCESSES = "KNOWLEDGE_BOT_PROCESSES"


class ConfigError(Exception):
    """A config that cannot be used; `problems` are lines like `file: key.path: reason`."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _key_path(loc: tuple[str | int, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def _describe(error: Mapping) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown key"
    if error["type"] == "missing":
        return "required key is missing"
    return str(error["msg"]).removeprefix("Value error, ")


def parse_config(
    text: str,
    *,
    origin: str,
    env: Mapping[str, str],
    base_dir: Path,
    skip_secrets: frozenset[str] = frozenset(),
) -> Settings:
    """Validate the text of a config file; `origin` names it in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{origin}: not valid TOML: {exc}"]) from None
    except RecursionError:
        raise ConfigError([f"{origin}: not valid TOML: nested too deeply"]) from None
    except ValueError:  # Python's limit on digits, hit by a number thousands of digits long
        raise ConfigError([f"{origin}: not valid TOML: a number is too long"]) from None
    try:
        context = {"env": env, "base_dir": base_dir, "skip_secrets": skip_secrets}
        settings = Settings.model_validate(data, context=context)
    except ValidationError as exc:
        problems = [
            f"{origin}: {_key_path(error['loc'])}: {_describe(error)}" for error in exc.errors()
        ]
        raise ConfigError(problems) from None
    if env.get(SEVERAL_PROCESSES) == "several" and not settings.storage.url:
        raise ConfigError(
            [
                f"{origin}: storage.url: several processes share this bot ({SEVERAL_PROCESSES}="
                "several, as deploy/compose/scale.yaml sets): give them one PostgreSQL database"
            ]
        )
    return settings


def load_config(
    path: Path, env: Mapping[str, str], *, skip_secrets: frozenset[str] = frozenset()
) -> Settings:
    """Read and validate the config file at `path`."""
    try:
        text = parse_config_text(path.read_bytes(), str(path))
    except OSError as exc:
        raise ConfigError([f"{path}: cannot be read: {exc.strerror}"]) from None
    return parse_config(
        text, origin=str(path), env=env, base_dir=path.parent.resolve(), skip_secrets=skip_secrets
    )


def parse_config_text(data: bytes, origin: str) -> str:
    """The file's text; bytes that are not UTF-8 are an error naming where they are."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            [f"{origin}: line {line}: not UTF-8 text (byte {exc.start}); save the file as UTF-8"]
        ) from None


def decide_restart_only_changes(old: Settings, new: Settings) -> list[str]:
    """The key paths that differ between two configs but only take effect on a restart."""
    changed = []
    for section in RESTART_ONLY_SECTIONS:
        old_values = getattr(old, section).model_dump()
        new_values = getattr(new, section).model_dump()
        changed += [
            f"{section}.{key}" for key in old_values if old_values[key] != new_values.get(key)
        ]
    for section, key in RESTART_ONLY_KEYS:
        if getattr(getattr(old, section), key) != getattr(getattr(new, section), key):
            changed.append(f"{section}.{key}")
    return changed
