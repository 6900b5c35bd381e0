"""Section-aware chunking, HTML blocks, keyword queries and rank fusion: pure functions."""

from __future__ import annotations

import itertools

import pytest

from core.knowledge.parse.chunking import build_chunks, parse_sections
from core.knowledge.parse.html_text import html_to_blocks
from core.knowledge.parse.text_tools import SentenceSplitter, count_words
from core.knowledge.search.keywords import (
    build_index_text,
    build_match_query,
    decide_selective_words,
    parse_query_stems,
)
from core.knowledge.search.retrieval import decide_queries, fuse_by_rank, merge_by_best_rank

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


def test_a_huge_paragraph_without_full_stops_is_counted_a_few_times_per_chunk():
    """A 2 MB paragraph of words without a full stop took minutes to chunk with the
    bundled e5 (every word counted the run again, ~0.6 ms a count) and held the
    ingestion queue: each word is now counted once, each run once more. A counter that
    adds tokens across spaces (one per 8 joins here) still gets pieces that fit."""
    calls = []

    def count(text: str) -> int:
        calls.append(text)
        return count_words(text) + text.count(" ") // 8

    words = [f"w{i % 7}" for i in range(20_000)]
    found = build_chunks(
        " ".join(words), "text", budget=40, overlap=0, count=count, sentences=SPLIT
    )
    assert all(count(c.text) <= 40 for c in found)
    assert " ".join(c.text for c in found).split() == words, "every word, in order, once"
    assert len(found) <= 20_000 // 20 + 1
    assert len(calls) < 5 * len(found), len(calls)


def test_code_fences_keep_their_hashes():
    sections = parse_sections("# A\n```\n# not a heading\n```\n", "markdown")
    assert [(s.heading, [b.text for b in s.blocks]) for s in sections] == [
        ("A", ["```\n# not a heading\n```"])
    ]


def test_html_sections_skip_scripts_navigation_and_the_head():
    html = (
        "<html><head><title>Page title</title></head><body><nav>Menu</nav>"
        '<div class="navheader"><table><tr><td>Prev</td><td>Up</td><td>Next</td></tr></table>'
        "</div><h1>Title</h1><p>One <b>bold</b> line.</p><script>x()</script><h2>Sub</h2>"
        "<ul><li>Item</li><li><p>Other</p></li></ul></body></html>"
    )
    assert [(b.kind, b.text) for b in html_to_blocks(html)] == [
        ("heading", "Title"),
        ("text", "One bold line."),
        ("heading", "Sub"),
        ("list", "Item\nOther"),
    ]
    assert [(c.heading, c.text) for c in chunks(html, fmt="html")] == [
        ("Title", "One bold line."),
        ("Title > Sub", "Item\nOther"),
    ]


def test_setext_headings_nest_and_a_heading_alone_is_never_a_chunk():
    text = "Guide\n=====\n\nInstall\n-------\n\nRun it.\n\n## Empty\n\n## Use\nClick."
    assert [(c.heading, c.text) for c in chunks(text)] == [
        ("Guide > Install", "Run it."),
        ("Guide > Use", "Click."),
    ]


def test_lists_and_tables_stay_whole_when_they_fit():
    text = (
        "# Kit\nYou get:\n\n- a laptop\n- a phone\n  with a charger\n\n"
        "| item | years |\n| --- | --- |\n| laptop | 4 |\n| phone | 3 |\n"
    )
    [chunk] = chunks(text, budget=60)
    assert chunk.text == (
        "You get:\n\n- a laptop\n- a phone\n  with a charger\n\n"
        "| item | years |\n| --- | --- |\n| laptop | 4 |\n| phone | 3 |"
    )


def test_a_long_table_is_cut_at_rows_with_its_header_in_every_piece():
    rows = "\n".join(f"| device {i} | {i} years |" for i in range(30))
    result = chunks(f"# T\n| device | life |\n| --- | --- |\n{rows}\n", budget=40, overlap=0)
    assert len(result) > 2 and all(c.tokens <= 40 for c in result)
    for chunk in result:
        assert chunk.text.startswith("| device | life |\n| --- | --- |\n| device ")
        assert all(line.startswith("|") and line.endswith("|") for line in chunk.text.splitlines())
    joined = "\n".join(c.text for c in result)
    assert all(f"| device {i} | {i} years |" in joined for i in range(30)), "nothing is lost"


def test_code_is_cut_between_lines_never_inside_one():
    code = "\n".join(f"    x{i} = compute({i}, 'value')" for i in range(40))
    result = chunks(f"# Code\n```python\n{code}\n```\n", budget=50, overlap=10)
    lines = {line for c in result for line in c.text.splitlines()}
    assert all(f"    x{i} = compute({i}, 'value')" in lines for i in range(40))
    assert all(c.tokens <= 50 for c in result)


def test_html_tables_code_and_definitions():
    html = (
        "<h1>Settings</h1><table><thead><tr><th>Name</th><th>Default</th></tr></thead>"
        "<tbody><tr><td>work_mem</td><td>4MB</td></tr></tbody></table>"
        "<pre>SET work_mem = '64MB';\nSHOW work_mem;</pre>"
        "<dl><dt><code>fillfactor</code></dt><dd><p>How full pages are packed.</p></dd></dl>"
    )
    assert [(b.kind, b.text) for b in html_to_blocks(html)] == [
        ("heading", "Settings"),
        ("table", "Name | Default\nwork_mem | 4MB"),
        ("code", "SET work_mem = '64MB';\nSHOW work_mem;"),
        ("text", "fillfactor: How full pages are packed."),
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
    "words as the index stems them": ("replicas vacuuming", '"replica" AND "vacuum"'),
    "only stop words": ("what is it?", ""),
}


@pytest.mark.parametrize("text,expected", QUERIES.values(), ids=QUERIES.keys())
def test_build_match_query(text, expected):
    assert build_match_query(parse_query_stems(text)) == expected


STEMS = {
    "German": ("Wie richte ich die Replikate ein?", "de", ["richt", "replikat"]),
    "French": ("Comment configurer les répliques ?", "fr", ["configur", "repliqu"]),
    "Spanish": ("¿Cómo configuro las réplicas?", "es", ["configur", "replic"]),
    "a language Snowball lacks: plain words": ("東京 タワー", "ja", ["東京", "タワー"]),
}


@pytest.mark.parametrize("text,language,expected", STEMS.values(), ids=STEMS.keys())
def test_questions_are_stemmed_in_the_collections_language(text, language, expected):
    assert parse_query_stems(text, language) == expected


def test_the_index_and_the_question_stem_alike():
    indexed = build_index_text("Die Replikation der Tabellen", "de").split()
    assert set(parse_query_stems("Replikationen von Tabelle", "de")) <= set(indexed)


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


def test_searches_in_two_languages_are_ranked_as_one():
    # The translation finds "b" first; the question as asked, "a" first: each id keeps
    # its best rank once, so neither search's finds count twice in the fusion.
    assert merge_by_best_rank([["a", "c", "b"], ["b", "a"]]) == ["a", "b", "c"]
    assert merge_by_best_rank([[], ["x"]]) == ["x"]


QUERIES_BY_LANGUAGE = {
    "the question everywhere, its translation where its language is": (
        {"en": "How many leave days?"},
        {"docs": "en", "wiki": "de"},
        [("Wie viele Urlaubstage?", ("docs", "wiki")), ("How many leave days?", ("docs",))],
    ),
    "no collection of that language": (
        {"fr": "Combien ?"},
        {"docs": "en"},
        [("Wie viele Urlaubstage?", ("docs",))],
    ),
    "a translation that repeats the question": (
        {"de": "wie viele urlaubstage?"},
        {"wiki": "de"},
        [("Wie viele Urlaubstage?", ("wiki",))],
    ),
}


@pytest.mark.parametrize(
    "translations,languages,expected", QUERIES_BY_LANGUAGE.values(), ids=QUERIES_BY_LANGUAGE.keys()
)
def test_decide_queries(translations, languages, expected):
    assert decide_queries("Wie viele Urlaubstage?", translations, languages) == expected


PLACES = {
    "title and section": ("Travel policy", "Expenses", "Travel policy > Expenses"),
    "a first heading equal to the title": (
        "On-call handbook",
        "On-call handbook > Rotation",
        "On-call handbook > Rotation",
    ),
    "only the title's heading": ("On-call handbook", "On-call handbook", "On-call handbook"),
    "no section": ("FAQ", "", "FAQ"),
    "equal but for case and spaces": (
        "On-call Handbook",
        " on-call handbook > Pager",
        "On-call Handbook > Pager",
    ),
}


@pytest.mark.parametrize("title,heading,expected", PLACES.values(), ids=PLACES.keys())
def test_build_place_does_not_repeat_a_heading_equal_to_the_title(title, heading, expected):
    from core.knowledge.documents import build_place

    assert build_place(title, heading) == expected
