"""The client's conversation, screened before it reaches a prompt.

A chat client sends the whole conversation with each question, the assistant's turns
too: none of it was judged here, and any of it may be forged. So every earlier user and
assistant turn passes the guardrails a question passes (the injection patterns and the
local toxicity tier), and an assistant turn that is one of the refusals says that the
question it answers was refused then (toxic, an injection, or out of scope: the model's
verdicts, not asked again). A turn that fails is left out, and a failed question takes
the answers to it along: on Matrix such a turn suspends the conversation for the next
question (core/memory/followup.py), so that nothing of it reaches the model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import lru_cache

from core import strings
from core.config.guardrails import GuardrailSettings
from core.guardrails.injection import configured_detector
from core.guardrails.toxicity import LocalToxicity
from core.i18n.catalogs import available_languages
from core.i18n.language import speaking

Turn = tuple[str, str]  # (role, text): "user" or "assistant"


@lru_cache(maxsize=1)
def refusal_starts() -> dict[str, tuple[str, ...]]:
    """The start of each refusal that suspends a conversation on Matrix (SUSPENDING_OUTCOMES
    of core/memory/followup.py), in every language spoken; read once, as the catalogs
    are compiled on first use."""
    starts: dict[str, list[str]] = {"toxic": [], "injection": [], "out_of_scope": []}
    for language in available_languages():
        with speaking(language):
            starts["toxic"].append(strings.TOXIC_DECLINED)
            starts["injection"].append(strings.INJECTION_DECLINED)
            # The collections listed after it are the assistant's of the day.
            starts["out_of_scope"].append(strings.OUT_OF_SCOPE.split("{collections}")[0])
    return {outcome: tuple(texts) for outcome, texts in starts.items()}


def parse_refusal(text: str) -> str | None:
    """The outcome ("toxic", "injection", "out_of_scope") of the question an assistant
    turn answers, when the turn is the refusal given to it; None otherwise."""
    text = text.strip()
    for outcome, starts in refusal_starts().items():
        if any(text.startswith(start.strip()) for start in starts):
            return outcome
    return None


def decide_turn(
    settings: GuardrailSettings, *, injection: str | None, toxicity_grade: int
) -> str | None:
    """Why a turn of the conversation fails the guardrails ("injection", "toxic"), or
    None. Not its length: the limit is a question's, and the prompt fits the turns in."""
    if injection is not None:
        return "injection"
    if toxicity_grade >= settings.local_toxicity_grade:
        return "toxic"
    return None


def decide_history(turns: Sequence[Turn], failures: Sequence[str | None]) -> tuple[Turn, ...]:
    """The turns that may reach a prompt, given why each failed the guardrails (None:
    it passed). A failed question goes with the answers after it, which build on it; a
    failed answer goes alone. A refusal marks the question before it as failed."""
    failed = list(failures)
    question: int | None = None
    for index, (role, text) in enumerate(turns):
        if role == "user":
            question = index
        elif outcome := parse_refusal(text):
            failed[index] = outcome
            if question is not None:
                failed[question] = failed[question] or outcome
    kept: list[Turn] = []
    dropping = False
    for turn, failure in zip(turns, failed, strict=True):
        if turn[0] == "user":
            dropping = failure is not None
        if not dropping and failure is None:
            kept.append(turn)
    return tuple(kept)


class ConversationScreen:
    """Runs the guardrails over the turns of a client's conversation."""

    def __init__(self) -> None:
        self.toxicity = LocalToxicity()

    async def failures(
        self, turns: Sequence[Turn], settings: GuardrailSettings
    ) -> list[str | None]:
        """Why each turn fails the guardrails, or None (see `decide_turn`)."""
        if not turns:
            return []
        detector = configured_detector(settings.injection_patterns)
        texts = [text for _, text in turns]
        grades = await asyncio.to_thread(self.toxicity.grade_all, texts)
        return [
            decide_turn(settings, injection=detector.find(text), toxicity_grade=grade)
            for text, grade in zip(texts, grades, strict=True)
        ]
