"""Section-aware chunking: split at headings, then paragraphs, then sentences, in a token budget.

Pure: the token counter and the sentence splitter are passed in, so that the same code
runs with the embedding model's tokenizer in production and is easy to test.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from core.knowledge.documents import Chunk, DocumentFormat
from core.knowledge.html_text import html_to_blocks

CountTokens = Callable[[str], int]
SplitSentences = Callable[[str], list[str]]

MARKDOWN_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class Section:
    headings: list[str]
    paragraphs: list[str] = field(default_factory=list)

    @property
    def heading(self) -> str:
        return " > ".join(self.headings)


def parse_markdown(text: str) -> list[Section]:
    sections = [Section([])]
    paragraph: list[str] = []
    in_fence = False

    def close_paragraph() -> None:
        if any(line.strip() for line in paragraph):
            sections[-1].paragraphs.append("\n".join(paragraph).strip())
        paragraph.clear()

    for line in text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            paragraph.append(line)
            continue
        heading = None if in_fence else MARKDOWN_HEADING.match(line)
        if heading:
            close_paragraph()
            level = len(heading.group(1))
            parents = sections[-1].headings[: level - 1]
            sections.append(Section([*parents, heading.group(2)]))
        elif not line.strip() and not in_fence:
            close_paragraph()
        else:
            paragraph.append(line)
    close_paragraph()
    return [section for section in sections if section.paragraphs]


def parse_sections(text: str, fmt: DocumentFormat) -> list[Section]:
    """The document's sections, each with its heading path and its paragraphs."""
    if fmt == "markdown":
        return parse_markdown(text)
    if fmt == "html":
        sections = [Section([])]
        for level, block in html_to_blocks(text):
            if level:
                sections.append(Section([*sections[-1].headings[: level - 1], block]))
            else:
                sections[-1].paragraphs.append(block)
        return [section for section in sections if section.paragraphs]
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    return [Section([], paragraphs)] if paragraphs else []


def _split_long(text: str, budget: int, count: CountTokens, sentences: SplitSentences) -> list[str]:
    """Pieces of `text` that each fit the budget: sentences, or word runs for huge sentences."""
    pieces: list[str] = []
    for sentence in sentences(text):
        if count(sentence) <= budget:
            pieces.append(sentence)
            continue
        words: list[str] = []
        for word in sentence.split():
            if words and count(" ".join([*words, word])) > budget:
                pieces.append(" ".join(words))
                words = []
            words.append(word)
        if words:
            pieces.append(" ".join(words))
    return pieces


# A unit is a paragraph, or a piece of one; the flag says it starts a paragraph.
Unit = tuple[str, bool]


def _join(units: list[Unit]) -> str:
    text = ""
    for piece, starts_paragraph in units:
        text += ("\n\n" if starts_paragraph else " ") + piece if text else piece
    return text


def _overlap_tail(
    units: list[Unit], overlap: int, count: CountTokens, sentences: SplitSentences
) -> list[Unit]:
    """The last sentences of a chunk, up to `overlap` tokens, to start the next one with."""
    tail: list[str] = []
    for sentence in reversed(sentences(_join(units))):
        if count(" ".join([sentence, *tail])) > overlap:
            break
        tail.insert(0, sentence)
    return [(sentence, index == 0) for index, sentence in enumerate(tail)]


def _pack_section(
    section: Section, budget: int, overlap: int, count: CountTokens, sentences: SplitSentences
) -> list[str]:
    """Greedy packing of a section's paragraphs (or their sentences) into chunk bodies."""
    bodies: list[str] = []
    current: list[Unit] = []
    for paragraph in section.paragraphs:
        pieces = (
            [paragraph]
            if count(paragraph) <= budget
            else _split_long(paragraph, budget, count, sentences)
        )
        for index, piece in enumerate(pieces):
            unit = (piece, index == 0)
            if current and count(_join([*current, unit])) > budget:
                bodies.append(_join(current))
                current = _overlap_tail(current, overlap, count, sentences) if overlap else []
                while current and count(_join([*current, unit])) > budget:
                    current.pop(0)
            current.append(unit)
    if current:
        bodies.append(_join(current))
    return bodies


def build_chunks(
    text: str,
    fmt: DocumentFormat,
    *,
    budget: int,
    overlap: int,
    count: CountTokens,
    sentences: SplitSentences,
) -> list[Chunk]:
    """Chunks of at most `budget` tokens; consecutive chunks of a section share `overlap`."""
    chunks: list[Chunk] = []
    for section in parse_sections(text, fmt):
        for body in _pack_section(section, budget, overlap, count, sentences):
            chunks.append(Chunk(len(chunks), body, section.heading, count(body)))
    return chunks
