"""Secrets given inline or through an environment variable named in the config."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationInfo


def context_of(info: ValidationInfo) -> Mapping[str, Any]:
    return info.context or {}


def existing_file(value: Path, info: ValidationInfo, what: str) -> Path:
    """`value` as a path (relative ones from the config file's folder), which must be a
    file; the error names `what` it is."""
    base = context_of(info).get("base_dir")
    path = value if value.is_absolute() or base is None else Path(base) / value
    if not path.is_file():
        raise ValueError(f"the {what} {path} does not exist")
    return path


def secret_from_env(info: ValidationInfo, name: str | None) -> SecretStr | None:
    """The value of the environment variable `name` (from the loading context), if set."""
    value = context_of(info).get("env", {}).get(name, "") if name else ""
    return SecretStr(value) if value else None


def env_var_checker(section: str) -> Callable[[str | None, ValidationInfo], str | None]:
    """A field validator for `*_env` keys: the variable must be set when the config loads.

    Tools that do not use a section's secrets load with the section in `skip_secrets`
    (the ingestion command line needs neither the bot's login nor the sources' tokens).
    """

    def check(name: str | None, info: ValidationInfo) -> str | None:
        context = context_of(info)
        needed = section not in context.get("skip_secrets", ())
        if name is not None and needed and not context.get("env", {}).get(name):
            raise ValueError(f"the environment variable {name} is not set or empty")
        return name

    return check


def resolve_one_secret(
    info: ValidationInfo, given: Mapping[str, tuple[SecretStr | None, str | None]]
) -> tuple[str, SecretStr]:
    """The one secret given, as (its name, its value), from `{name: (inline, env var name)}`.

    Raises ValueError naming the keys when none or several are given.
    """
    env = context_of(info).get("env", {})
    present = []
    for name, (inline, env_name) in given.items():
        if inline is not None:
            present.append((name, name, inline))
        if env_name is not None:
            present.append((name, f"{name}_env", SecretStr(env.get(env_name, ""))))
    if len(present) != 1:
        keys = [key for name in given for key in (name, f"{name}_env")]
        found = f" (found {', '.join(key for _, key, _ in present)})" if present else ""
        raise ValueError(f"give exactly one of {', '.join(keys[:-1])} or {keys[-1]}{found}")
    name, _, value = present[0]
    return name, value
