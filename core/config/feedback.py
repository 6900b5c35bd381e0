"""Settings of feedback: the question after a 👎, who reads the reports, ranking bounds."""

from __future__ import annotations

from pydantic import Field, field_validator

from core.config.strict import Strict
from core.config.users import check_user_ids


class FeedbackSettings(Strict):
    ask_after_downvote: bool = True
    """After a 👎, ask in the thread what was wrong; the reply is kept with the vote."""
    admins: tuple[str, ...] = ()
    """Who may use !feedback (in bot.admin_room only)."""
    keep_days: int = Field(default=90, ge=1, le=3650)
    """Days an answer's record (question, trace, comments, votes) is kept."""
    up_step: float = Field(default=0.02, ge=0, le=1)
    """How votes move a cited document in later rankings: its score is multiplied by 1 + up_step
    per 👍 - down_step per 👎, within [1 - max_down, 1 + max_up]."""
    down_step: float = Field(default=0.1, ge=0, le=1)
    """How votes move the documents an answer cited in later searches: the score is multiplied by 1
    + up_step per 👍 - down_step per 👎, kept within [1 - max_down, 1 + max_up]."""
    max_up: float = Field(default=0.1, ge=0, le=1)
    """How votes move the documents an answer cited in later searches: the score is multiplied by 1
    + up_step per 👍 - down_step per 👎, kept within [1 - max_down, 1 + max_up]."""
    max_down: float = Field(default=0.5, ge=0, le=0.95)
    """How votes move the documents an answer cited in later searches: the score is multiplied by 1
    + up_step per 👍 - down_step per 👎, kept within [1 - max_down, 1 + max_up]."""

    _admins = field_validator("admins")(check_user_ids)
