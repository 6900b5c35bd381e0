"""The question set: JSON lines of `question`, and `expected_answer` and/or
`expected_ids` (the documents that answer it)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Question:
    question: str
    expected_answer: str = ""
    expected_ids: tuple[str, ...] = ()


class QuestionSetError(Exception):
    """The question file cannot be used; the text names the line."""


def read_questions(path: Path) -> list[Question]:
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            ids = item.get("expected_ids", [])
            if not isinstance(item["question"], str) or not isinstance(ids, list):
                raise ValueError("question must be text and expected_ids a list")
            questions.append(
                Question(
                    item["question"], str(item.get("expected_answer", "")), tuple(map(str, ids))
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise QuestionSetError(f"{path}:{number}: {type(exc).__name__}: {exc}") from None
    if not questions:
        raise QuestionSetError(f"{path}: no questions")
    return questions
