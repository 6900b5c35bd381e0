"""`[[predetermined]]`: answers fixed by admins for questions that match given patterns
(decided in core/predetermined.py)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from core.config.strict import Strict


class PredeterminedAnswer(Strict):
    """`[[predetermined]]`: when a question matches any of `patterns` (regular expressions,
    searched case-insensitively), the bot answers `answer` word for word."""

    patterns: tuple[str, ...] = Field(min_length=1)
    """Regular expressions, searched case-insensitively in the question; any match answers."""
    answer: str = Field(min_length=1)
    """The answer, posted word for word (Markdown)."""

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a valid regular expression ({exc})") from None
        return patterns
