"""Settings of the answer pipeline."""

from __future__ import annotations

from pydantic import Field

from core.config.strict import Strict


class PipelineSettings(Strict):
    toxicity_threshold: int = Field(default=6, ge=1, le=10)
    """Questions graded at or above this (0-10) are declined and never answered."""
    context_tokens: int = Field(default=3000, ge=200, le=100_000)
    """Tokens (estimated) shared by the sources and the conversation in the answer prompt."""
    support_check: bool = True
    """After the answer, check how well its sources support it and add a badge."""
    stream_edit_seconds: float = Field(default=1.5, ge=0.2, le=30)
    """Seconds between edits of a streaming answer."""
    early_answer: bool = True
    """Start the answer beside the pre-step when the question needs nothing from the conversation:
    first words after one model call instead of two; an answer call is wasted when the pre-step
    declines or rewrites the question."""
