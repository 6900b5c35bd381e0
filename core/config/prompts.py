"""`[prompts.<name>]`: admins' overrides of the shipped prompts, checked when the config loads."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, ValidationInfo, field_validator

from core.config.placeholders import check_template
from core.config.strict import Strict


class PromptOverride(Strict):
    name: ClassVar[str] = ""
    system: str | None = None
    """The prompt's system message; unset: the shipped one (core/llm/prompts.toml). A
    placeholder the prompt does not know is a config error."""
    user: str | None = None
    """The prompt's user message; unset: the shipped one (core/llm/prompts.toml). A
    placeholder the prompt does not know is a config error."""

    @field_validator("system", "user")
    @classmethod
    def _placeholders(cls, value: str | None, info: ValidationInfo) -> str | None:
        return None if value is None else check_template(cls.name, info.field_name or "", value)


class PrestepPrompt(PromptOverride):
    name: ClassVar[str] = "prestep"


class AnswerPrompt(PromptOverride):
    name: ClassVar[str] = "answer"


class SupportPrompt(PromptOverride):
    name: ClassVar[str] = "support"


class SummaryPrompt(PromptOverride):
    name: ClassVar[str] = "summary"


class SummaryMergePrompt(PromptOverride):
    name: ClassVar[str] = "summary_merge"


class SummarySupportPrompt(PromptOverride):
    name: ClassVar[str] = "summary_support"


class JudgePrompt(PromptOverride):
    name: ClassVar[str] = "judge"


class PromptSettings(Strict):
    prestep: PrestepPrompt = Field(default_factory=PrestepPrompt)
    answer: AnswerPrompt = Field(default_factory=AnswerPrompt)
    support: SupportPrompt = Field(default_factory=SupportPrompt)
    summary: SummaryPrompt = Field(default_factory=SummaryPrompt)
    summary_merge: SummaryMergePrompt = Field(default_factory=SummaryMergePrompt)
    summary_support: SummarySupportPrompt = Field(default_factory=SummarySupportPrompt)
    judge: JudgePrompt = Field(default_factory=JudgePrompt)

    def overrides(self) -> dict[str, dict[str, str]]:
        return {
            name: {part: text for part, text in getattr(self, name).model_dump().items() if text}
            for name in type(self).model_fields
        }
