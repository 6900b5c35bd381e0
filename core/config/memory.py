"""Settings of the conversation memory: follow-up rules, rephrasing, history, memories."""

from __future__ import annotations

from pydantic import Field, model_validator

from core.config.strict import Strict

AGAIN_WORDS = ("again", "repeat", "redo", "remake", "retry", "once more")
AMEND_WORDS = (
    "also",
    "too",
    "without",
    "instead",
    "rather",
    "only",
    "remove",
    "add",
    "beside",
    "besides",
    "except",
    "what about",
    "how about",
    "same for",
    "tell me more",
    "shorter",
)


class MemorySettings(Strict):
    again_words: tuple[str, ...] = AGAIN_WORDS
    """Words that mark a follow-up of the previous question (matched as whole words)."""
    amend_words: tuple[str, ...] = AMEND_WORDS
    """A question stands alone unless it is a follow-up: a reply to the bot, a message in its
    thread, or a message with one of these words. Then the recent lines (bot.recent_messages)
    come with it. After a toxic or out-of-scope question, the next one stands alone."""
    rephrase_min_chrf: float = Field(default=45.0, ge=0, le=100)
    """A rephrasing made without the conversation must keep this chrF (0-100) against the original
    question, besides keeping its content words and negation."""
    window_lines: int = Field(default=8, ge=2, le=100)
    """Windows of the room's dialog embedded into its history: lines each, and lines shared by
    consecutive windows."""
    window_overlap: int = Field(default=2, ge=0)
    """The room's history: windows of this many lines, consecutive windows sharing window_overlap
    lines. A room quiet for 15 minutes has its last lines embedded too."""
    history_top_k: int = Field(default=3, ge=0, le=20)
    """Passages of the room's history given with a question, and the cosine distance above which a
    passage is not relevant."""
    history_max_distance: float = Field(default=0.75, gt=0, le=2)
    """Windows of the room's history given with a question (0: none), and the cosine distance above
    which a window is not relevant."""
    max_memories_per_room: int = Field(default=100, ge=1)
    """Explicit memories ("remember that ...") kept per room, and given with a question."""
    memories_in_prompt: int = Field(default=20, ge=0)
    """"remember that ..." keeps a memory of the room (or of the speaker, for "remember that I
    ..."), listed by !memory and removed by !forget. Memories never leave their room."""

    @model_validator(mode="after")
    def _overlap_below_window(self) -> MemorySettings:
        if self.window_overlap >= self.window_lines:
            raise ValueError("window_overlap must be smaller than window_lines")
        return self
