"""The pipeline's prompts: shipped in prompts.toml, overridable per part from the config.

Each prompt part declares the placeholders it may use and those it must use, so that a
typo in an admin's override (`{questoin}`) is a config error naming the key, never a
broken answer at run time.
"""

from __future__ import annotations

import string
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

# (allowed, required) placeholders per prompt part.
PLACEHOLDERS: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {
    ("prestep", "system"): (frozenset({"collections", "languages"}), frozenset()),
    ("prestep", "user"): (frozenset({"conversation", "question"}), frozenset({"question"})),
    ("answer", "system"): (frozenset({"collections", "language"}), frozenset()),
    ("answer", "user"): (
        frozenset({"sources", "memories", "conversation", "question"}),
        frozenset({"sources", "question"}),
    ),
    ("summary", "system"): (frozenset(), frozenset()),
    ("summary", "user"): (frozenset({"messages"}), frozenset({"messages"})),
    ("summary_merge", "system"): (frozenset(), frozenset()),
    ("summary_merge", "user"): (frozenset({"summaries"}), frozenset({"summaries"})),
    ("summary_support", "system"): (frozenset(), frozenset()),
    ("summary_support", "user"): (frozenset({"points"}), frozenset({"points"})),
    ("judge", "system"): (frozenset(), frozenset()),
    ("judge", "user"): (
        frozenset({"question", "expected", "sources", "answer"}),
        frozenset({"question", "sources", "answer"}),
    ),
    ("support", "system"): (frozenset(), frozenset()),
    ("support", "user"): (frozenset({"sources", "answer"}), frozenset({"sources", "answer"})),
}


def check_template(name: str, part: str, template: str) -> str:
    """The template, if its placeholders are the ones this prompt part knows."""
    allowed, required = PLACEHOLDERS[(name, part)]
    try:
        used = {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    except ValueError as exc:
        raise ValueError(
            f"not a valid template ({exc}); write {{{{ and }}}} for literal braces"
        ) from None
    unknown = used - allowed
    if unknown:
        known = ", ".join(f"{{{p}}}" for p in sorted(allowed)) or "none"
        raise ValueError(f"unknown placeholder {{{sorted(unknown)[0]}}} (known: {known})")
    missing = required - used
    if missing:
        raise ValueError(f"the placeholder {{{sorted(missing)[0]}}} is required")
    return template


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
