"""Pre-steps: cheap local checks first, then one structured LLM call that sorts the message."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

GREETING = re.compile(
    r"^\s*(hi|hello|hey|hallo|good (morning|afternoon|evening)|thanks|thank you|thx|cheers)"
    r"[\s!.,]*(bot|everyone|all)?[\s!.]*$",
    re.IGNORECASE,
)


class PrestepVerdict(BaseModel):
    """What the model says about a message (the schema of the structured call)."""

    model_config = ConfigDict(extra="forbid")

    toxicity: int = Field(ge=0, le=10)
    injection: bool
    kind: Literal["command", "comment"]
    in_scope: bool
    remember: bool
    needs_context: bool
    standalone_question: str


Decision = Literal["greeting", "toxic", "injection", "comment", "out_of_scope", "answer"]


def decide_locally(text: str) -> Decision | None:
    """What can be decided without the model; None when the model must look."""
    return "greeting" if GREETING.match(text) else None


def decide_from_verdict(verdict: PrestepVerdict, toxicity_threshold: int) -> Decision:
    """Toxic first (never answered), then injection, comments, scope."""
    if verdict.toxicity >= toxicity_threshold:
        return "toxic"
    if verdict.injection:
        return "injection"
    if verdict.kind == "comment":
        return "comment"
    if not verdict.in_scope:
        return "out_of_scope"
    return "answer"
