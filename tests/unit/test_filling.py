"""Which passages reach the model (the budget filled, neighbours merged, no document
crowding out the rest) and which a search-only answer shows (relevant ones, or none)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.knowledge.documents import Hit
from core.pipeline.filling import (
    build_context_hits,
    build_joined_text,
    decide_order,
    decide_relevant_hits,
)


def hit(
    doc: str,
    position: int,
    score: float = 0.0,
    text: str = "",
    heading: str = "H",
    distance: float | None = 0.3,
) -> Hit:
    return Hit(
        f"c/{doc}#v#{position}",
        "c",
        doc,
        "wiki",
        doc.title(),
        "",
        heading,
        text or f"{doc} chunk {position}.",
        position,
        True,
        score,
        distance=distance,
    )


def cost(h: Hit) -> int:
    return len(h.text.split())


def test_the_budget_is_filled_with_the_best_chunks_that_fit():
    hits = [hit("a", 0, 0.9, "one two three"), hit("b", 0, 0.8, "w " * 10), hit("c", 0, 0.7)]
    chosen = build_context_hits(hits, {}, budget=7, cost=cost)
    assert [h.document_id for h in chosen] == ["a", "c"], "a chunk too big is passed over"


def test_neighbours_of_the_same_section_are_added_and_merged_into_one_passage():
    best = hit("a", 5, 0.9, "The middle part.")
    neighbours = {
        ("c", "a", 4): hit("a", 4, text="The first part."),
        ("c", "a", 6): hit("a", 6, text="The last part."),
        ("c", "a", 7): hit("a", 7, text="Another section.", heading="Other"),
    }
    [passage] = build_context_hits([best], neighbours, budget=100, cost=cost)
    assert passage.text == "The first part.\n\nThe middle part.\n\nThe last part."
    assert (passage.chunk_id, passage.score, passage.position) == (best.chunk_id, 0.9, 4)


def test_neighbours_wait_for_the_budget_and_the_best_passage_grows_first():
    first, second = hit("a", 1, 0.9, "one two"), hit("b", 1, 0.8, "three four")
    neighbours = {
        ("c", "a", 2): hit("a", 2, text="five six"),
        ("c", "b", 2): hit("b", 2, text="seven eight"),
    }
    chosen = build_context_hits([first, second], neighbours, budget=6, cost=cost)
    assert [h.text for h in chosen] == ["one two\n\nfive six", "three four"]


def test_two_hits_side_by_side_become_one_passage_at_the_better_place():
    hits = [hit("a", 3, 0.9, "Later."), hit("b", 0, 0.8), hit("a", 2, 0.7, "Earlier.")]
    chosen = build_context_hits(hits, {}, budget=100, cost=cost)
    assert [h.document_id for h in chosen] == ["a", "b"]
    assert chosen[0].text == "Earlier.\n\nLater." and chosen[0].score == 0.9


def test_a_long_document_does_not_crowd_out_the_others():
    hits = [hit("a", 0, 1.0), hit("a", 5, 0.95), hit("a", 9, 0.9), hit("b", 0, 0.8)]
    assert [(h.document_id, h.position) for h in decide_order(hits)][:3] == [
        ("a", 0),
        ("b", 0),
        ("a", 5),
    ]


JOINS = {
    "the overlap is said once": (
        "Alpha one. Beta two. Gamma three.",
        "Beta two. Gamma three. Delta four.",
        "Alpha one. Beta two. Gamma three.\n\nDelta four.",
    ),
    "no overlap": ("Alpha.", "Beta.", "Alpha.\n\nBeta."),
    "a word's tail is no overlap": ("The cat", "at home", "The cat\n\nat home"),
    "contained": ("Alpha one. Beta two.", "Beta two.", "Alpha one. Beta two."),
}


@pytest.mark.parametrize("first,second,expected", JOINS.values(), ids=JOINS.keys())
def test_build_joined_text(first, second, expected):
    assert build_joined_text(first, second) == expected


RELEVANT = {
    "near ones, within reach of the best": (
        [(0.35, None), (0.4, None), (0.6, None), (0.45, None)],
        ["0.35", "0.4", "0.45"],
    ),
    "farther ones only with a keyword match too": (
        [(0.62, 4), (0.65, None)],
        ["0.62"],
    ),
    "nothing near: none": ([(0.65, None), (0.8, 1)], []),
    "keyword-only hits are not shown alone": ([(None, 1), (0.4, 2)], ["0.4"]),
    "at most the limit": (
        [(0.3, None), (0.31, 1), (0.32, None), (0.33, 2)],
        ["0.3", "0.31", "0.32"],
    ),
}


@pytest.mark.parametrize("found,expected", RELEVANT.values(), ids=RELEVANT.keys())
def test_decide_relevant_hits(found, expected):
    hits = [replace(hit(str(d), n, distance=d), keyword_rank=k) for n, (d, k) in enumerate(found)]
    shown = decide_relevant_hits(hits, limit=3, near=0.55, max_distance=0.7, relative=0.15)
    assert [h.document_id for h in shown] == expected
