"""The local tier of the toxicity check: a small classifier that decides the clear cases.

alt-profanity-check (a linear model trained on human-labelled toxic comments) grades in
about 6 ms on 2 cores, so the clearly abusive never reach search or the model. It is
blind to polite bigotry and to claims against scientific consensus: those are left to
the model's grade.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence


class LocalToxicity:
    """Loaded on first use (scikit-learn takes a second or two to import)."""

    # Mild swearing ("crap", "hell") grades high too: see tests/bench/bench_guardrails.py.

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._predict = None

    def _model(self):
        with self._lock:
            if self._predict is None:
                from profanity_check import predict_prob

                self._predict = predict_prob
        return self._predict

    def grade(self, text: str) -> int:
        """0 (harmless) to 10 (certainly abusive); blocking, run it in a thread."""
        return round(float(self._model()([text])[0]) * 10)

    def grade_all(self, texts: Sequence[str]) -> list[int]:
        """`grade` of each text, in one call of the classifier; blocking, as `grade`."""
        if not texts:
            return []
        return [round(float(p) * 10) for p in self._model()(list(texts))]
