"""The text of search-only answers: the passages that best match a question, quoted with
numbered citations. Shared by the search-only mode (core/passages.py) and the answer
pipeline's fallback when the model fails (core/pipeline/failures.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core import strings
from core.config.knowledge import RetrievalSettings
from core.history.line_store import HistoryLine
from core.knowledge.documents import Hit
from core.knowledge.search.keywords import parse_query_words, stem_word
from core.memory.memory import ConversationMemory
from core.memory.store import Memory
from core.pipeline.filling import decide_shown_hits
from core.pipeline.sources import Sources
from core.requests import Source
from core.sources import build_source

SNIPPET_CHARS = 400
MEMORIES_SHOWN = 3
# Lines of one window of the room's discussion quoted at most.
QUOTED_LINES = 4


def build_snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"


def decide_relevant_memories(
    question: str, memories: Sequence[Memory], limit: int = MEMORIES_SHOWN
) -> list[Memory]:
    """The room's memories that share a word (not a stop word) with the question, most
    shared words first, then newest: without a model, word overlap stands for relevance."""
    asked = set(parse_query_words(question))
    scored = [(len(asked & set(parse_query_words(m.text))), n, m) for n, m in enumerate(memories)]
    ranked = sorted((item for item in scored if item[0]), key=lambda i: (-i[0], -i[1]))
    return [memory for _, _, memory in ranked[:limit]]


def decide_quoted_lines(question: str, lines: Sequence[HistoryLine]) -> list[HistoryLine]:
    """The lines of a window of the room's discussion worth quoting for `question`: those
    that share a word with it (in any form), each question among them with the line that
    answers it (the next one); the most shared first, at most QUOTED_LINES, in the order
    they were said. None shares a word: the window's first lines."""
    asked = {stem_word(word) for word in parse_query_words(question)}
    scores: dict[int, int] = {}
    for n, line in enumerate(lines):
        shared = len(asked & {stem_word(word) for word in parse_query_words(line.text)})
        if shared:
            scores[n] = max(scores.get(n, 0), shared)
            if line.text.rstrip().endswith("?") and n + 1 < len(lines):
                scores[n + 1] = max(scores.get(n + 1, 0), shared)
    if not scores:
        return list(lines[:QUOTED_LINES])
    best = sorted(scores, key=lambda n: (-scores[n], n))[:QUOTED_LINES]
    return [lines[n] for n in sorted(best)]


def build_quoted_line(line: HistoryLine, number: int) -> str:
    """A line of the room's discussion as quoted: whole, who said it, its link, and the
    number of its source."""
    link = f" ([{strings.MESSAGE_LINK}]({line.link}))" if line.link else ""
    return f"> {line.sender}: {' '.join(line.text.split())}{link} [{number}]"


def parse_window_lines(text: str) -> list[HistoryLine]:
    """A window's lines from its text ("sender: text" each), for windows of an earlier
    release, which kept no lines (no links then)."""
    found = [row.partition(": ") for row in text.splitlines()]
    return [HistoryLine(-1, sender, said, 0.0, "") for sender, _, said in found if said]


def build_passages_answer(
    hits: list[Hit],
    memories: Sequence[Memory] = (),
    lines: Mapping[str, Sequence[HistoryLine]] | None = None,
    intro: str | None = None,
) -> tuple[str, tuple[Source, ...]]:
    """The answer text (`intro`, what the room remembers, then quoted passages, each with
    its source number) and the sources. A hit of the room's discussion with its `lines`
    (by chunk id, as `decide_quoted_lines` picks them) is quoted line by line."""
    if not hits and not memories:
        return strings.NOTHING_FOUND, ()
    numbers: dict[tuple[str, str], int] = {}
    sources: list[Source] = []
    parts = [strings.SEARCH_ONLY_INTRO if intro is None else intro]
    if memories:
        parts.append(strings.SEARCH_ONLY_MEMORIES)
        parts += [f"> {build_snippet(memory.text)}" for memory in memories]
    for hit in hits:
        key = (hit.collection, hit.document_id)
        if key not in numbers:
            numbers[key] = len(sources) + 1
            shown = [h for h in hits if (h.collection, h.document_id) == key]
            sources.append(build_source(hit, shown))
        if quoted := (lines or {}).get(hit.chunk_id):
            parts += [build_quoted_line(line, numbers[key]) for line in quoted]
        else:
            parts.append(f"> {build_snippet(hit.text)} [{numbers[key]}]")
    return "\n\n".join(parts), tuple(sources)


def build_search_only_answer(
    question: str,
    found: Sources,
    retrieval: RetrievalSettings,
    quoted: Mapping[str, Sequence[HistoryLine]],
    intro: str | None = None,
) -> tuple[str, tuple[Source, ...], bool]:
    """What search alone answers `question` with from what was `found`: the relevant
    memories and passages (as `build_passages_answer`), their sources, and whether any
    was relevant. Search-only mode answers so, and so does the pipeline when the model
    fails (core/pipeline/answer.py)."""
    memories = decide_relevant_memories(question, found.memories)
    shown = decide_shown_hits(found.documents, retrieval) + found.history
    text, sources = build_passages_answer(shown, memories, quoted, intro)
    if found.unchecked:
        text += "\n\n" + strings.SOURCES_UNCHECKED
    if found.encrypted_left_out:
        text += "\n\n" + strings.ENCRYPTED_LEFT_OUT
    return text, sources, bool(shown or memories)


async def fetch_quoted_lines(
    memory: ConversationMemory | None, question: str, found: Sources
) -> dict[str, list[HistoryLine]]:
    """The lines to quote of each window of the room's discussion found, by its id."""
    quoted = {}
    for window in found.windows:
        if window.last_seq >= 0 and memory is not None:
            lines = await memory.store.lines_between(window.room, window.first_seq, window.last_seq)
        else:
            lines = parse_window_lines(window.text)
        if lines:
            quoted[window.id] = decide_quoted_lines(question, lines)
    return quoted
