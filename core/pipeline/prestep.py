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


class SearchQuery(BaseModel):
    """The question written for searching a collection of another language."""

    model_config = ConfigDict(extra="forbid")

    language: str
    query: str


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
    # Optional, so that a model (or a scripted reply) that writes none still sorts the
    # message: the question is then searched as asked, as before languages.
    search_queries: list[SearchQuery] = Field(default_factory=list)


# A translated search query longer than this (and than 4 times the question) is dropped.
MAX_QUERY_CHARS = 1_000

Decision = Literal["greeting", "toxic", "injection", "comment", "out_of_scope", "answer"]


def decide_translations(
    verdict: PrestepVerdict, question: str, languages: set[str]
) -> dict[str, str]:
    """The search queries worth a search of their own: one per language of the
    searched collections, not the question again, and no longer than a question may be
    several times over (a model's runaway output is no query)."""
    found: dict[str, str] = {}
    limit = max(MAX_QUERY_CHARS, len(question) * 4)
    for item in verdict.search_queries:
        language, query = item.language.strip().lower(), item.query.strip()
        same = query.casefold() == question.strip().casefold()
        if language in languages and query and not same and len(query) <= limit:
            found.setdefault(language, query)
    return found


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


def build_default_verdict(text: str) -> PrestepVerdict:
    """The verdict when the pre-step gave none: a question, in scope, searched as asked."""
    return PrestepVerdict(
        toxicity=0,
        injection=False,
        kind="command",
        in_scope=True,
        remember=False,
        needs_context=False,
        standalone_question=text,
    )
