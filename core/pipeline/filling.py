"""Which passages a question is answered from (pure).

For the model: the context budget filled with the best chunks, no document crowding out
the others, then each chunk grown by its neighbours in the same section (small-to-big)
while the budget lasts, and touching chunks merged into one passage. For search-only
answers: only the passages that are relevant, or none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from core.config.knowledge import RetrievalSettings
from core.knowledge.documents import Hit

# The n-th chunk of one document counts DIVERSITY^(n-1) of its score when passages are
# chosen, so that a long document does not fill the context alone.
DIVERSITY = 0.7
# The longest overlap between consecutive chunks that merging looks for, in characters.
MAX_OVERLAP_CHARS = 2000

ChunkKey = tuple[str, str, int]


def key_of(hit: Hit) -> ChunkKey:
    return (hit.collection, hit.document_id, hit.position)


def decide_order(hits: Sequence[Hit]) -> list[Hit]:
    """The hits (best first) with repeated documents discounted."""
    seen: Counter[tuple[str, str]] = Counter()
    scored = []
    for index, hit in enumerate(hits):
        document = (hit.collection, hit.document_id)
        scored.append((hit.score * DIVERSITY ** seen[document], index, hit))
        seen[document] += 1
    return [hit for _, _, hit in sorted(scored, key=lambda item: (-item[0], item[1]))]


def build_joined_text(first: str, second: str) -> str:
    """Two consecutive chunks as one text: the start of `second` that repeats the end
    of `first` (the chunks' overlap) is said once."""
    longest = min(len(first), len(second), MAX_OVERLAP_CHARS)
    for size in range(longest, 0, -1):
        whole_words = (size == len(second) or not second[size].isalnum()) and (
            size == len(first) or not first[-size - 1].isalnum()
        )
        if whole_words and first.endswith(second[:size]):
            rest = second[size:].lstrip()
            return first if not rest else f"{first}\n\n{rest}"
    return f"{first}\n\n{second}"


def _grow(
    groups: list[list[Hit]],
    neighbours: Mapping[ChunkKey, Hit],
    taken: set[ChunkKey],
    room: int,
    cost: Callable[[Hit], int],
) -> None:
    """Add neighbours of the same section to each group, best group first, in rounds,
    while they fit in `room`."""
    grew = True
    while grew:
        grew = False
        for group in groups:
            for edge, step in ((group[0], -1), (group[-1], 1)):
                found = neighbours.get((edge.collection, edge.document_id, edge.position + step))
                if found is None or key_of(found) in taken or found.heading != edge.heading:
                    continue
                if cost(found) > room:
                    continue
                room -= cost(found)
                taken.add(key_of(found))
                group.insert(0, found) if step < 0 else group.append(found)
                grew = True


def build_context_hits(
    hits: Sequence[Hit],
    neighbours: Mapping[ChunkKey, Hit],
    budget: int,
    cost: Callable[[Hit], int],
) -> list[Hit]:
    """Passages for the model, best first, costing at most `budget` together: the best
    chunks that fit, then their neighbours (from `neighbours`, chunks of the same
    document version); chunks that end up side by side in a section become one passage
    (its text merged, its score and id those of its best chunk)."""
    groups: list[list[Hit]] = []
    taken: set[ChunkKey] = set()
    room = budget
    for hit in decide_order(hits):
        if key_of(hit) in taken or cost(hit) > room:
            continue
        room -= cost(hit)
        taken.add(key_of(hit))
        groups.append([hit])
    _grow(groups, neighbours, taken, room, cost)
    return [_merged(group) for group in _joined(groups)]


def _joined(groups: list[list[Hit]]) -> list[list[Hit]]:
    """Groups of one section that now touch, as one (at the place of the better)."""
    result: list[list[Hit]] = []
    for group in groups:
        for earlier in result:
            same = (earlier[0].collection, earlier[0].document_id, earlier[0].heading) == (
                group[0].collection,
                group[0].document_id,
                group[0].heading,
            )
            if same and (
                group[0].position == earlier[-1].position + 1
                or earlier[0].position == group[-1].position + 1
            ):
                earlier[:] = sorted([*earlier, *group], key=lambda hit: hit.position)
                break
        else:
            result.append(group)
    return result


def _merged(group: list[Hit]) -> Hit:
    best = max(group, key=lambda hit: hit.score)
    text = group[0].text
    for hit in group[1:]:
        text = build_joined_text(text, hit.text)
    return replace(best, text=text, position=group[0].position)


def decide_relevant_hits(
    hits: Sequence[Hit], limit: int, near: float, max_distance: float, relative: float
) -> list[Hit]:
    """The passages worth showing on their own (search-only answers), best first: near
    the question in meaning (cosine distance up to `near`), or a little farther (up to
    `max_distance`) when the keyword search found it too; and at most `relative`
    farther than the best such passage. A keyword match alone is not enough, nor one
    shared topic word: both make passages that answer nothing. None when none is."""

    def relevant(hit: Hit) -> bool:
        if hit.distance is None:
            return False
        return hit.distance <= near or (
            hit.distance <= max_distance and hit.keyword_rank is not None
        )

    candidates = [hit for hit in hits if relevant(hit)]
    if not candidates:
        return []
    best = min(hit.distance for hit in candidates if hit.distance is not None)
    shown = [
        hit for hit in candidates if hit.distance is not None and hit.distance <= best + relative
    ]
    return shown[:limit]


def decide_shown_hits(hits: Sequence[Hit], retrieval: RetrievalSettings) -> list[Hit]:
    """`decide_relevant_hits` with [retrieval]'s thresholds: what a search-only answer
    shows (the answer itself, and the evaluations that measure it)."""
    return decide_relevant_hits(
        hits,
        retrieval.top_k,
        near=retrieval.passage_near_distance,
        max_distance=retrieval.passage_max_distance,
        relative=retrieval.passage_relative_distance,
    )
