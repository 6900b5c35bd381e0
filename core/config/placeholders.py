"""The placeholders each prompt part may use and must use, and the check of a template
against them: for the shipped prompts (core/llm/prompts.py) and for admins' overrides
when the config loads (core/config/prompts.py, core/config/chat_api.py)."""

from __future__ import annotations

import string

# (allowed, required) placeholders per prompt part.
PLACEHOLDERS: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {
    ("prestep", "system"): (frozenset({"collections", "languages"}), frozenset()),
    ("prestep", "user"): (frozenset({"conversation", "question"}), frozenset({"question"})),
    ("answer", "system"): (frozenset({"collections", "language"}), frozenset()),
    ("answer", "user"): (
        frozenset({"sources", "memories", "conversation", "question"}),
        frozenset({"sources", "question"}),
    ),
    ("summary", "system"): (frozenset({"language"}), frozenset()),
    ("summary", "user"): (frozenset({"messages"}), frozenset({"messages"})),
    ("summary_merge", "system"): (frozenset({"language"}), frozenset()),
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
