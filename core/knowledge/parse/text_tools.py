"""Offline language tools for chunking: sentence splitting and token counting."""

from __future__ import annotations

import spacy


class SentenceSplitter:
    """spaCy's rule-based sentencizer: no model download, works for most languages."""

    def __init__(self) -> None:
        self._nlp = spacy.blank("xx")
        self._nlp.add_pipe("sentencizer")
        self._nlp.max_length = 10_000_000

    def __call__(self, text: str) -> list[str]:
        return [s.text.strip() for s in self._nlp(text).sents if s.text.strip()]


def count_words(text: str) -> int:
    """A tokenizer-free count, for tests and dry runs; about 0.75 of model tokens in English."""
    return len(text.split())
