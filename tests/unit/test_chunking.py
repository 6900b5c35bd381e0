"""Section-aware chunking, HTML blocks, keyword queries and rank fusion: pure functions."""

from __future__ import annotations

import itertools

import pytest

from core.knowledge.chunking import build_chunks, parse_sections
from core.knowledge.html_text import html_to_blocks
from core.knowledge.keywords import build_match_query, decide_selective_words, parse_query_words
from core.knowledge.retrieval import fuse_by_rank
from core.knowledge.text_tools import SentenceSplitter, count_words

SPLIT = SentenceSplitter()


def chunks(text, fmt="markdown", budget=40, overlap=10):
    return build_chunks(
        text, fmt, budget=budget, overlap=overlap, count=count_words, sentences=SPLIT
    )


def test_headings_nest_and_travel_with_each_chunk():
    text = "# Guide\nIntro.\n\n## Install\nRun it.\n\n### Linux\nUse apt.\n\n## Use\nClick."
    assert [(c.heading, c.text) for c in chunks(text)] == [
        ("Guide", "Intro."),
        ("Guide > Install", "Run it."),
        ("Guide > Install > Linux", "Use apt."),
        ("Guide > Use", "Click."),
    ]


def test_paragraphs_are_packed_and_long_ones_split_at_sentences_with_overlap():
    long = " ".join(f"Sentence {i} has five words." for i in range(20))
    result = chunks(f"# T\nShort one.\n\n{long}", budget=30, overlap=10)
    assert all(c.tokens <= 30 for c in result)
    assert result[0].text.startswith("Short one.")
    for before, after in itertools.pairwise(result):
        assert after.text.split(". ")[0] in before.text, "consecutive chunks share an overlap"
    joined = " ".join(c.text for c in result)
    assert all(f"Sentence {i} " in joined for i in range(20)), "nothing is lost"
    assert [c.position for c in result] == list(range(len(result)))


def test_a_giant_sentence_is_cut_into_word_runs():
    result = chunks("word " * 100, fmt="text", budget=32, overlap=0)
    assert [c.tokens for c in result] == [32, 32, 32, 4]


def test_code_fences_keep_their_hashes():
    sections = parse_sections("# A\n```\n# not a heading\n```\n", "markdown")
    assert [(s.heading, s.paragraphs) for s in sections] == [("A", ["```\n# not a heading\n```"])]


def test_html_sections_skip_scripts_and_navigation():
    html = "<html><nav>Menu</nav><h1>Title</h1><p>One <b>bold</b> line.</p><script>x()</script><h2>Sub</h2><ul><li>Item</li></ul></html>"
    assert html_to_blocks(html) == [(1, "Title"), (0, "One bold line."), (2, "Sub"), (0, "Item")]
    assert [(c.heading, c.text) for c in chunks(html, fmt="html")] == [
        ("Title", "One bold line."),
        ("Title > Sub", "Item"),
    ]


def test_empty_documents_have_no_chunks():
    assert chunks("   \n\n", fmt="text") == []


QUERIES = {
    "stop words dropped, two words need both": ("What is the VPN error?", '"vpn" AND "error"'),
    "one word": ("WG-503?", '"wg" AND "503"'),
    "three words need any two": (
        "vpn error code",
        '("vpn" AND "error") OR ("vpn" AND "code") OR ("error" AND "code")',
    ),
    "FTS syntax is quoted away": ('NEAR(x1) "OR" *', '"near" AND "x1"'),
    "accents as the index folds them": ("Café Zürich", '"cafe" AND "zurich"'),
    "only stop words": ("what is it?", ""),
}


@pytest.mark.parametrize("text,expected", QUERIES.values(), ids=QUERIES.keys())
def test_build_match_query(text, expected):
    assert build_match_query(parse_query_words(text)) == expected


SELECTIONS = {
    "rare words stay": (["vpn", "error"], {"vpn": 3, "error": 40}, 1000, ["vpn", "error"]),
    "words in a tenth of the chunks go": (
        ["policy", "vpn", "wg"],
        {"policy": 300, "vpn": 3, "wg": 2},
        1000,
        ["vpn", "wg"],
    ),
    "unknown words stay: they count towards two": (
        ["holiday", "year"],
        {"year": 30},
        1000,
        ["holiday", "year"],
    ),
    "the two rarest stay when all are common": (
        ["a1", "b2", "c3"],
        {"a1": 900, "b2": 500, "c3": 700},
        1000,
        ["b2", "c3"],
    ),
    "small indexes keep everything": (
        ["policy", "vpn"],
        {"policy": 40, "vpn": 3},
        60,
        ["policy", "vpn"],
    ),
}


@pytest.mark.parametrize(
    "words,frequency,chunks,expected", SELECTIONS.values(), ids=SELECTIONS.keys()
)
def test_decide_selective_words(words, frequency, chunks, expected):
    assert decide_selective_words(words, frequency, chunks) == expected


def test_fuse_by_rank_rewards_agreement_and_respects_weights():
    fused = fuse_by_rank([(["a", "b", "c"], 1.0), (["c", "d"], 1.0)], k=60)
    assert [chunk_id for chunk_id, _ in fused] == ["c", "a", "b", "d"]
    only_keyword = fuse_by_rank([(["a"], 0.0), (["b"], 1.0)], k=60)
    assert only_keyword[0] == ("b", 1 / 61)
