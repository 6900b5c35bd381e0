"""Structure-aware chunking: sections at headings; within them, blocks packed into a token
budget. A paragraph too long for a chunk is cut at sentences; code, lists and tables at
whole lines, items and rows.

Pure: the token counter and the sentence splitter are passed in, so that the same code
runs with the embedding model's tokenizer in production and is easy to test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from core.knowledge.documents import Chunk, DocumentFormat
from core.knowledge.parse.blocks import JOINERS, Block, BlockKind, paged_blocks, text_blocks
from core.knowledge.parse.html_text import html_to_blocks
from core.knowledge.parse.markdown_text import markdown_to_blocks

CountTokens = Callable[[str], int]
SplitSentences = Callable[[str], list[str]]


@dataclass
class Section:
    headings: list[str]
    blocks: list[Block] = field(default_factory=list)

    @property
    def heading(self) -> str:
        return " > ".join(self.headings)


def parse_blocks(text: str, fmt: DocumentFormat) -> list[Block]:
    if fmt == "markdown":
        return markdown_to_blocks(text)
    if fmt == "html":
        return html_to_blocks(text)
    if fmt == "paged":
        return paged_blocks(text)
    return text_blocks(text)


def parse_sections(text: str, fmt: DocumentFormat) -> list[Section]:
    """The document's sections, each with its heading path and its blocks; a heading
    with nothing under it is only part of the paths below it, never a chunk."""
    sections = [Section([])]
    for block in parse_blocks(text, fmt):
        if block.kind == "heading":
            parents = sections[-1].headings[: block.level - 1]
            sections.append(Section([*parents, block.text]))
        else:
            sections[-1].blocks.append(block)
    return [section for section in sections if section.blocks]


def _split_long(text: str, budget: int, count: CountTokens, sentences: SplitSentences) -> list[str]:
    """Pieces of `text` that each fit the budget: sentences, or word runs for huge sentences."""
    pieces: list[str] = []
    for sentence in sentences(text):
        if count(sentence) <= budget:
            pieces.append(sentence)
        else:
            pieces += _split_words(sentence.split(), budget, count)
    return pieces


def _split_words(words: list[str], budget: int, count: CountTokens) -> list[str]:
    """Runs of words that each fit the budget. A run is filled by its words' own counts,
    each word counted once (a tokenizer splits at spaces, so they add up), and only the
    run is counted whole: counting the run again at every word made a 2 MB paragraph
    without a full stop take minutes. A run the whole count finds too long (a tokenizer
    that joins across spaces) is halved until it fits; a single word longer than the
    budget stays whole, as the model cuts it."""
    sizes: dict[str, int] = {}
    pieces: list[str] = []
    run: list[str] = []
    used = 0
    for word in words:
        size = sizes.get(word)
        if size is None:
            # A word is a token at least (a counter that leaves out its own overhead
            # may give one word none).
            size = sizes[word] = max(1, count(word))
        if run and used + size > budget:
            pieces += _fitted(run, budget, count)
            run, used = [], 0
        run.append(word)
        used += size
    if run:
        pieces += _fitted(run, budget, count)
    return pieces


def _fitted(run: list[str], budget: int, count: CountTokens) -> list[str]:
    text = " ".join(run)
    if len(run) == 1 or count(text) <= budget:
        return [text]
    half = len(run) // 2
    return _fitted(run[:half], budget, count) + _fitted(run[half:], budget, count)


@dataclass(frozen=True)
class Piece:
    """A block, or a piece of one too long for a chunk; `first` when it starts its block."""

    text: str
    first: bool
    kind: BlockKind


def _join(pieces: list[Piece]) -> str:
    text = ""
    for piece in pieces:
        if text:
            text += "\n\n" if piece.first else JOINERS[piece.kind]
        text += piece.text
    return text


def _cut_block(
    block: Block, budget: int, count: CountTokens, sentences: SplitSentences
) -> list[str]:
    """A block longer than a chunk, in pieces that fit: a paragraph at sentences; code,
    lists and tables at whole lines, items or rows (a table's header row in each piece).
    Only a single line longer than a chunk is cut inside."""
    if block.kind == "text":
        return _split_long(block.text, budget, count, sentences)
    joiner = JOINERS[block.kind]
    header = list(block.parts[: block.header])
    pieces: list[str] = []
    current: list[str] = []
    for part in block.parts[block.header :]:
        if current and count(joiner.join([*header, *current, part])) > budget:
            pieces.append(joiner.join([*header, *current]))
            current = []
        if count(joiner.join([*header, part])) > budget:
            pieces += _split_long(part, budget, count, sentences)
            continue
        current.append(part)
    if current:
        pieces.append(joiner.join([*header, *current]))
    return pieces


def _overlap_tail(
    pieces: list[Piece], overlap: int, count: CountTokens, sentences: SplitSentences
) -> list[Piece]:
    """The last sentences of a chunk that ends in prose, up to `overlap` tokens, to start
    the next one with. Code, lists and tables are not repeated."""
    if not pieces or pieces[-1].kind != "text":
        return []
    tail: list[str] = []
    for sentence in reversed(sentences(pieces[-1].text)):
        if count(" ".join([sentence, *tail])) > overlap:
            break
        tail.insert(0, sentence)
    return [Piece(sentence, index == 0, "text") for index, sentence in enumerate(tail)]


def _pack_section(
    section: Section, budget: int, overlap: int, count: CountTokens, sentences: SplitSentences
) -> list[str]:
    """Greedy packing of a section's blocks (or their pieces) into chunk bodies."""
    bodies: list[str] = []
    current: list[Piece] = []
    for block in section.blocks:
        whole = block.text
        texts = [whole] if count(whole) <= budget else _cut_block(block, budget, count, sentences)
        for index, text in enumerate(texts):
            piece = Piece(text, index == 0, block.kind)
            if current and count(_join([*current, piece])) > budget:
                bodies.append(_join(current))
                current = _overlap_tail(current, overlap, count, sentences) if overlap else []
                while current and count(_join([*current, piece])) > budget:
                    current.pop(0)
            current.append(piece)
    if current:
        bodies.append(_join(current))
    return bodies


# A chunk's body when the collection sets no size and the model reads more: longer
# passages dilute what a vector says (see docs/concepts/knowledge.md).
DEFAULT_BUDGET = 400
# Tokens a section is always given, however long its title and headings.
MIN_BUDGET = 32


def decide_budget(
    configured: int | None, limit: int | None, context: str, count: CountTokens
) -> int:
    """A section's chunk size: the configured size (or DEFAULT_BUDGET), cut so that the
    chunk with its `context` (title and headings, embedded with it) fits the model's
    input `limit`; the two newlines that join them count as a token each."""
    budget = configured or DEFAULT_BUDGET
    if limit is None:
        return budget
    return min(budget, max(MIN_BUDGET, limit - count(context) - 2))


def build_chunks(
    text: str,
    fmt: DocumentFormat,
    *,
    budget: int | None,
    overlap: int,
    count: CountTokens,
    sentences: SplitSentences,
    title: str = "",
    limit: int | None = None,
) -> list[Chunk]:
    """Chunks of `budget` tokens at most (None: DEFAULT_BUDGET), fewer where the chunk with
    `title` and its heading path would not fit the model's input `limit`; consecutive
    chunks of a section share `overlap`."""
    chunks: list[Chunk] = []
    for section in parse_sections(text, fmt):
        size = decide_budget(budget, limit, "\n".join([title, section.heading]), count)
        for body in _pack_section(section, size, min(overlap, size // 2), count, sentences):
            chunks.append(Chunk(len(chunks), body, section.heading, count(body)))
    return chunks
