"""The guardrails every question passes before search or the model, with or without one:
length, rate limits, known injection patterns, and the local toxicity tier."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from core import strings
from core.answering import Answerer
from core.config import Settings
from core.config.guardrails import GuardrailSettings
from core.guardrails.injection import configured_detector
from core.guardrails.rate_store import LocalRateLimits, RateLimits
from core.guardrails.toxicity import LocalToxicity
from core.memory.memory import ConversationMemory
from core.requests import Answer, Progress, Request
from core.trace import GuardrailsStep


@dataclass(frozen=True)
class Refusal:
    outcome: str  # recorded as the turn's outcome
    text: str


def decide_refusal(
    text: str,
    settings: GuardrailSettings,
    *,
    over_limit: str | None,
    injection: str | None,
    toxicity_grade: int | None,
) -> Refusal | None:
    """Why the question is declined before anything else runs, or None."""
    if len(text) > settings.max_question_chars:
        return Refusal("too_long", strings.TOO_LONG.format(limit=settings.max_question_chars))
    if over_limit is not None:
        per = "user" if over_limit.startswith("user:") else "room"
        return Refusal("rate_limited", strings.RATE_LIMITED[per])
    if injection is not None:
        return Refusal("injection", strings.INJECTION_DECLINED)
    if toxicity_grade is not None and toxicity_grade >= settings.local_toxicity_grade:
        return Refusal("toxic", strings.TOXIC_DECLINED)
    return None


class Guarded:
    """Runs the guardrails, then the inner answerer; a declined question is recorded as
    the conversation's turn, so that the next one does not build on it."""

    def __init__(
        self,
        inner: Answerer,
        settings: Callable[[], Settings],
        memory: ConversationMemory | None = None,
        limits: RateLimits | None = None,
    ) -> None:
        self.inner = inner
        self.settings = settings
        self.memory = memory
        self.limits = limits or LocalRateLimits()
        self.toxicity = LocalToxicity()

    async def answer(self, request: Request, progress: Progress | None = None) -> Answer:
        started = time.perf_counter()
        guard = self.settings().guardrails
        over = injection = grade = None
        if len(request.text) <= guard.max_question_chars:
            over = await self.limits.allows(
                {
                    f"user:{request.sender}": guard.user_questions_per_minute,
                    f"room:{request.room}": guard.room_questions_per_minute,
                }
            )
        if over is None:
            injection = configured_detector(guard.injection_patterns).find(request.text)
        if over is None and injection is None:
            grade = await asyncio.to_thread(self.toxicity.grade, request.text)
        refusal = decide_refusal(
            request.text, guard, over_limit=over, injection=injection, toxicity_grade=grade
        )
        step = GuardrailsStep(time.perf_counter() - started, grade, injection, over)
        if refusal is None:
            answer = await self.inner.answer(request, progress)
            return replace(answer, trace=(step, *answer.trace))
        if self.memory is not None and refusal.outcome != "rate_limited":
            await self.memory.record_turn(request, request.text, refusal.outcome)
        return Answer(refusal.text, kind="refusal", trace=(step,), reason=refusal.outcome)
