"""The question set: JSON lines of `question`, and `expected_answer` and/or
`expected_ids` (the documents that answer it), and optionally `facts` (snippets of
those documents that hold the answer)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Question:
    question: str
    expected_answer: str = ""
    expected_ids: tuple[str, ...] = ()
    # Short verbatim snippets of the expected pages that hold the answer (context recall).
    facts: tuple[str, ...] = ()


class QuestionSetError(Exception):
    """The question file cannot be used; the text names the line."""


def read_json_lines(path: Path, parse: Callable[[Any], T]) -> list[T]:
    """Each non-blank line of a JSON-lines question file, parsed; QuestionSetError names
    a line that cannot be used, or a file with none."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            found.append(parse(json.loads(line)))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise QuestionSetError(f"{path}:{number}: {type(exc).__name__}: {exc}") from None
    if not found:
        raise QuestionSetError(f"{path}: no questions")
    return found


def parse_question(item: Any) -> Question:
    ids, facts = item.get("expected_ids", []), item.get("facts", [])
    if not isinstance(item["question"], str) or not isinstance(ids, list):
        raise ValueError("question must be text and expected_ids a list")
    if not isinstance(facts, list):
        raise ValueError("facts must be a list")
    return Question(
        item["question"],
        str(item.get("expected_answer", "")),
        tuple(map(str, ids)),
        tuple(map(str, facts)),
    )


def read_questions(path: Path) -> list[Question]:
    return read_json_lines(path, parse_question)
