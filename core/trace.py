"""How an answer was made, step by step, as typed records.

Each step is a dataclass of its own, so metrics, feedback and the evaluation read fields
(`AnswerStep.model`) rather than keys of a dict picked by a step's name. `record()`
gives the form kept with feedback and exported: `{"name", "seconds", "details"}`, the
same as before the steps were typed, so stored traces read alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, TypeVar

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Step:
    name: ClassVar[str] = "step"
    seconds: float

    def record(self) -> dict[str, Any]:
        """The step as kept with an answer's feedback (JSON)."""
        details = asdict(self)
        del details["seconds"]
        return {"name": self.name, "seconds": self.seconds, "details": details}


@dataclass(frozen=True)
class ParseStep(Step):
    name: ClassVar[str] = "parse"
    question: str
    recent_lines: int


@dataclass(frozen=True)
class PredeterminedStep(Step):
    name: ClassVar[str] = "predetermined"
    matched: bool = True


@dataclass(frozen=True)
class LocalStep(Step):
    """Answered without the model (a greeting)."""

    name: ClassVar[str] = "local"
    decision: str


@dataclass(frozen=True)
class GuardrailsStep(Step):
    name: ClassVar[str] = "guardrails"
    local_toxicity: float | None
    injection: str | None
    over_limit: str | None


@dataclass(frozen=True)
class FollowupStep(Step):
    name: ClassVar[str] = "followup"
    use_previous: bool
    reason: str


@dataclass(frozen=True)
class PrestepStep(Step):
    """The model's first look: is it a question for the documents, and which one."""

    name: ClassVar[str] = "prestep"
    verdict: dict[str, Any]
    prompt: Messages
    tokens: int
    # The call failed (its failure cause, e.g. "llm_cut_off"): `verdict` is the default
    # one, the question searched as asked.
    fell_back: str = ""


@dataclass(frozen=True)
class RephraseStep(Step):
    name: ClassVar[str] = "rephrase"
    question: str  # what was searched
    rephrased: str  # what the model proposed
    accepted: bool
    reason: str
    chrf: float


@dataclass(frozen=True)
class RetrieveStep(Step):
    name: ClassVar[str] = "retrieve"
    question: str
    hits: tuple[str, ...]  # chunk ids, best first


@dataclass(frozen=True)
class RightsStep(Step):
    name: ClassVar[str] = "rights"
    audience: str
    denied: tuple[str, ...]  # chunk ids the readers may not see
    unchecked: bool


@dataclass(frozen=True)
class RecallStep(Step):
    """The room's own knowledge: its history windows and memories."""

    name: ClassVar[str] = "recall"
    time_range: tuple[Any, ...] | None  # (expression, start, end)
    history: tuple[tuple[str, float], ...]  # (window id, distance)
    memories: tuple[int, ...]


@dataclass(frozen=True)
class AnswerStep(Step):
    name: ClassVar[str] = "answer"
    prompt: Messages
    raw: str
    model: str
    prompt_version: str
    # Characters of the model's inline reasoning left out of `raw` (never their text).
    reasoning_chars: int = 0


@dataclass(frozen=True)
class FallbackStep(Step):
    """The answer's model call failed (`cause`, as counted): the passages search found
    were shown under the failure notice instead."""

    name: ClassVar[str] = "fallback"
    cause: str


@dataclass(frozen=True)
class RememberStep(Step):
    name: ClassVar[str] = "remember"
    memory: int
    scope: str


S = TypeVar("S", bound=Step)


def find_step(trace: Iterable[Step], kind: type[S]) -> S | None:
    """The trace's step of this kind, if it has one."""
    return next((step for step in trace if isinstance(step, kind)), None)
