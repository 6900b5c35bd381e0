"""What people are told when the model gave no answer, and what it is counted as."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core import strings
from core.citations import build_cited_text
from core.config import Settings
from core.history.line_store import HistoryLine
from core.llm.client import (
    EmptyAnswer,
    IncompleteAnswer,
    LlmCutOff,
    LlmError,
    LlmFiltered,
    LlmInvalidOutput,
    LlmPromptTooLong,
    LlmRefused,
    LlmServerFailed,
    LlmTimedOut,
    LlmUnavailable,
    LlmUnreachable,
)
from core.pipeline.quoting import build_search_only_answer
from core.pipeline.sources import Sources
from core.requests import FALLBACK_REASON, Answer


def build_failure_notice(error: LlmError, *, show_partial: bool = True) -> str:
    """The notice in place of an answer the model did not give: for an incomplete one,
    what it wrote so far, quoted and marked incomplete (with `show_partial`, i.e. while
    the readers it was written for are still all who read it); else what happened."""
    partial = error.partial if isinstance(error, IncompleteAnswer) and show_partial else ""
    # No source is listed under it, so its citation markers would point at nothing.
    text = build_cited_text(partial, ())[0].strip()
    if not text:
        return decide_failure_text(error)
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines())
    return strings.LLM_INCOMPLETE.format(partial=quoted)


# Each kind of failure with its sentence (by name: `strings` reads it in the reader's
# language when asked) and its cause (`bot_failures_total{cause}`), most specific
# first: "did not answer in time" is said for a time-out only.
FAILURES: tuple[tuple[type[LlmError], str, str], ...] = (
    (IncompleteAnswer, "LLM_STOPPED", "llm_incomplete"),
    (EmptyAnswer, "LLM_EMPTY", "llm_empty"),
    (LlmPromptTooLong, "LLM_TOO_LONG", "llm_too_long"),
    (LlmRefused, "LLM_REFUSED", "llm_refused"),
    (LlmUnreachable, "LLM_UNAVAILABLE", "llm_unreachable"),
    (LlmServerFailed, "LLM_SERVER_ERROR", "llm_server_error"),
    (LlmTimedOut, "LLM_FAILED", "llm_timeout"),
    (LlmCutOff, "LLM_CUT_OFF", "llm_cut_off"),
    (LlmInvalidOutput, "LLM_INVALID", "llm_invalid_output"),
    (LlmFiltered, "LLM_FILTERED", "llm_filtered"),
    (LlmUnavailable, "LLM_UNAVAILABLE", "llm"),
)


def decide_failure_text(error: LlmError) -> str:
    """What people are told when the model gave no answer: what happened, never "did not
    answer in time" for anything but a time-out."""
    name = next((text for kind, text, _ in FAILURES if isinstance(error, kind)), "LLM_ERROR")
    return str(getattr(strings, name))


def failure_cause(error: LlmError) -> str:
    """The cause a failed answer is counted under (`bot_failures_total{cause}`)."""
    return next((cause for kind, _, cause in FAILURES if isinstance(error, kind)), "llm")


def build_fallback_answer(
    error: LlmError,
    question: str,
    sources: Sources,
    settings: Settings,
    quoted: Mapping[str, Sequence[HistoryLine]],
) -> Answer | None:
    """The answer when the model's failed: its failure notice (with what an incomplete
    answer wrote, quoted), then the passages search found, marked as such, with their
    sources; None when search found nothing relevant (the notice alone is said)."""
    text, cited, relevant = build_search_only_answer(
        question, sources, settings.retrieval, quoted, strings.LLM_FALLBACK_INTRO
    )
    if not relevant:
        return None
    if sources.unavailable:
        text += "\n\n" + strings.SEARCH_PARTLY_UNAVAILABLE
    notice = build_failure_notice(error)
    return Answer(
        f"{notice}\n\n{text}", sources=cited, reason=FALLBACK_REASON + failure_cause(error)
    )
