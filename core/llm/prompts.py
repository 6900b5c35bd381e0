"""The pipeline's prompts: shipped in prompts.toml, overridable per part from the config.

Each prompt part declares the placeholders it may use and those it must use, so that a
typo in an admin's override (`{questoin}`) is a config error naming the key, never a
broken answer at run time.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from core.config.placeholders import PLACEHOLDERS, check_template


@dataclass(frozen=True)
class Prompts:
    version: str
    parts: dict[tuple[str, str], str]

    def messages(self, name: str, **values: str) -> list[dict[str, str]]:
        """The system and user messages of a prompt; each part takes the values it names."""
        return [
            {"role": role, "content": self.parts[(name, role)].format(**values)}
            for role in ("system", "user")
        ]


def load_prompts(overrides: dict[str, dict[str, Any]] | None = None) -> Prompts:
    """The shipped prompts with the config's overrides applied (checked by the config)."""
    shipped = tomllib.loads(resources.files("core.llm").joinpath("prompts.toml").read_text())
    parts = {}
    for name, part in PLACEHOLDERS:
        template = (overrides or {}).get(name, {}).get(part) or shipped[name][part]
        parts[(name, part)] = check_template(name, part, template)
    changed = "+overrides" if any((overrides or {}).values()) else ""
    return Prompts(version=shipped["version"] + changed, parts=parts)
