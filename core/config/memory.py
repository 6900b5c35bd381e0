"""Settings of the conversation memory: follow-up rules, rephrasing, history, memories."""

from __future__ import annotations

from pydantic import Field, model_validator

from core.config.strict import Strict

AGAIN_WORDS = ("again", "repeat", "redo", "remake", "retry", "once more")
AMEND_WORDS = (
    "also", "too", "without", "instead", "rather", "only", "remove", "add", "beside",
    "besides", "except", "what about", "how about", "same for", "tell me more", "shorter",
)  # fmt: skip


class MemorySettings(Strict):
    # Words that mark a follow-up of the previous question (matched as whole words).
    again_words: tuple[str, ...] = AGAIN_WORDS
    amend_words: tuple[str, ...] = AMEND_WORDS
    # A rephrasing made without the conversation must keep this chrF (0-100) against
    # the original question, besides keeping its content words and negation.
    rephrase_min_chrf: float = Field(default=45.0, ge=0, le=100)
    # Windows of the room's dialog embedded into its history: lines each, and lines
    # shared by consecutive windows.
    window_lines: int = Field(default=8, ge=2, le=100)
    window_overlap: int = Field(default=2, ge=0)
    # Passages of the room's history given with a question, and the cosine distance
    # above which a passage is not relevant.
    history_top_k: int = Field(default=3, ge=0, le=20)
    history_max_distance: float = Field(default=0.75, gt=0, le=2)
    # Explicit memories ("remember that ...") kept per room, and given with a question.
    max_memories_per_room: int = Field(default=100, ge=1)
    memories_in_prompt: int = Field(default=20, ge=0)

    @model_validator(mode="after")
    def _overlap_below_window(self) -> MemorySettings:
        if self.window_overlap >= self.window_lines:
            raise ValueError("window_overlap must be smaller than window_lines")
        return self
