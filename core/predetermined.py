"""Answers fixed by admins for questions that match given patterns, where precision matters."""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.config.predetermined import PredeterminedAnswer


def decide_predetermined(question: str, entries: Sequence[PredeterminedAnswer]) -> str | None:
    """The first entry's answer whose pattern the question matches, else None."""
    for entry in entries:
        if any(re.search(pattern, question, re.IGNORECASE) for pattern in entry.patterns):
            return entry.answer
    return None
