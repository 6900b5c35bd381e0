"""Secrets given inline or through an environment variable named in the config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import SecretStr, ValidationInfo


def context_of(info: ValidationInfo) -> Mapping[str, Any]:
    return info.context or {}


def check_env_var(name: str | None, info: ValidationInfo) -> str | None:
    """A field validator for `*_env` keys: the variable must be set when the config loads.

    Tools that need no secrets (the ingestion command line) load with `skip_secrets`.
    """
    context = context_of(info)
    if (
        name is not None
        and not context.get("skip_secrets")
        and not context.get("env", {}).get(name)
    ):
        raise ValueError(f"the environment variable {name} is not set or empty")
    return name


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
