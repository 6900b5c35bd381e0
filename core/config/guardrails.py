"""Settings of the guardrails that run before a question reaches search or the model."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from core.config.strict import Strict


class GuardrailSettings(Strict):
    max_question_chars: int = Field(default=2000, ge=20, le=100_000)
    """Longer questions are declined with the limit in the reply."""
    user_questions_per_minute: int = Field(default=10, ge=0)
    """Questions per person, and per room, in any 60 seconds; 0 turns a limit off."""
    room_questions_per_minute: int = Field(default=30, ge=0)
    """Questions per person and per room in any 60 seconds (0: no limit). Over the limit, the bot
    says so and answers nothing until the minute has passed."""
    local_toxicity_grade: int = Field(default=9, ge=1, le=10)
    """The local classifier's grade (0-10) at or above which a question is declined without asking
    the model. Without a model it is the only toxicity check."""
    injection_patterns: tuple[str, ...] = ()
    """More prompt-injection patterns (regular expressions, case-insensitive) to flag, besides the
    shipped ones."""

    @field_validator("injection_patterns")
    @classmethod
    def _compiles(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from exc
        return value
