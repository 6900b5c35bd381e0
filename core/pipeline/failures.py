"""What people are told when the model gave no answer, and what it is counted as."""

from __future__ import annotations

from core import strings
from core.citations import build_cited_text
from core.llm.client import (
    EmptyAnswer,
    IncompleteAnswer,
    LlmError,
    LlmPromptTooLong,
    LlmRefused,
    LlmServerFailed,
    LlmTimedOut,
    LlmUnreachable,
)


def build_failure_notice(error: LlmError, *, show_partial: bool = True) -> str:
    """The notice in place of an answer the model did not give: for an incomplete one,
    what it wrote so far, quoted and marked incomplete (with `show_partial`, i.e. while
    the readers it was written for are still all who read it); else the apology."""
    partial = error.partial if isinstance(error, IncompleteAnswer) and show_partial else ""
    # No source is listed under it, so its citation markers would point at nothing.
    text = build_cited_text(partial, ())[0].strip()
    if not text:
        return decide_failure_text(error)
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines())
    return strings.LLM_INCOMPLETE.format(partial=quoted)


def decide_failure_text(error: LlmError) -> str:
    """What people are told when the model gave no answer: what happened, never "did not
    answer in time" for a refusal."""
    if isinstance(error, LlmPromptTooLong):
        return strings.LLM_TOO_LONG
    if isinstance(error, LlmRefused):
        return strings.LLM_REFUSED
    if isinstance(error, LlmUnreachable | LlmServerFailed):
        return strings.LLM_UNAVAILABLE
    return strings.LLM_FAILED


FAILURE_CAUSES: tuple[tuple[type[LlmError], str], ...] = (
    (IncompleteAnswer, "llm_incomplete"),
    (EmptyAnswer, "llm_empty"),
    (LlmPromptTooLong, "llm_too_long"),
    (LlmRefused, "llm_refused"),
    (LlmUnreachable, "llm_unreachable"),
    (LlmServerFailed, "llm_server_error"),
    (LlmTimedOut, "llm_timeout"),
)


def failure_cause(error: LlmError) -> str:
    """The cause a failed answer is counted under (`bot_failures_total{cause}`)."""
    return next((cause for kind, cause in FAILURE_CAUSES if isinstance(error, kind)), "llm")
