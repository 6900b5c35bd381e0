"""The question set: JSON lines of `question`, and `expected_answer` and/or
`expected_ids` (the documents that answer it), and optionally `facts` (snippets of
those documents that hold the answer)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Question:
    question: str
    expected_answer: str = ""
    expected_ids: tuple[str, ...] = ()
    # Short verbatim snippets of the expected pages that hold the answer (context recall).
    facts: tuple[str, ...] = ()


class QuestionSetError(Exception):
    """The question file cannot be used; the text names the line."""


def read_questions(path: Path) -> list[Question]:
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            ids, facts = item.get("expected_ids", []), item.get("facts", [])
            if not isinstance(item["question"], str) or not isinstance(ids, list):
                raise ValueError("question must be text and expected_ids a list")
            if not isinstance(facts, list):
                raise ValueError("facts must be a list")
            questions.append(
                Question(
                    item["question"],
                    str(item.get("expected_answer", "")),
                    tuple(map(str, ids)),
                    tuple(map(str, facts)),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise QuestionSetError(f"{path}:{number}: {type(exc).__name__}: {exc}") from None
    if not questions:
        raise QuestionSetError(f"{path}: no questions")
    return questions
