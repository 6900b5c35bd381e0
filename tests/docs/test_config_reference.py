"""The configuration reference cannot drift: the settings models, config.example.toml and
docs/reference/configuration.md name the same keys, and the page is exactly what the
generator makes of the models."""

from __future__ import annotations

import re
from pathlib import Path

from core.config import reference

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference" / "configuration.md"
REGENERATE = f"regenerate it: .venv/bin/{reference.COMMAND}"


def test_every_key_has_a_description():
    missing = [key.path for key in reference.walk() if not (key.field.description or "").strip()]
    assert not missing, f"add a docstring under each field of the settings models: {missing}"


def test_the_committed_page_is_what_the_generator_makes():
    assert PAGE.read_text() == reference.render(), (
        f"{PAGE.relative_to(ROOT)} differs from the settings models; {REGENERATE}"
    )


def test_the_example_config_names_every_key_of_the_models_and_no_other():
    named = reference.example_keys((ROOT / "config.example.toml").read_text())
    keys = {key.path for key in reference.walk()}
    assert not keys - named, f"keys missing from config.example.toml: {sorted(keys - named)}"
    assert not named - keys, f"config.example.toml names unknown keys: {sorted(named - keys)}"


def test_the_page_names_every_key():
    page = PAGE.read_text()
    for key in reference.walk():
        heading = f"[[{key.section[:-2]}]]" if key.section.endswith("[]") else f"[{key.section}]"
        assert f"## `{heading}`" in page, f"{heading} is not on the page; {REGENERATE}"
        assert f"| `{key.name}` |" in page, f"{key.path} is not on the page; {REGENERATE}"


def test_the_example_keys_are_read_as_toml_reads_them():
    """A key set under a commented-out table belongs to the table set above it; keys under
    a free-form table name the table; a key the models lack is reported as written."""
    text = (
        '[knowledge]\n# [knowledge.embedding_endpoints.e5]\n# url = "http://e5/v1"\n'
        "max_document_bytes = 10\n[llm.request_fields.prestep]\nanything = 1\n"
        '[sources.wiki]\ntoken_env = "T"\n[rooms."!a:b"]\nhistory = false\n[bot]\ntypo = 1\n'
    )
    assert reference.example_keys(text) == {
        "knowledge.embedding_endpoints.<name>.url",
        "knowledge.max_document_bytes",
        "llm.request_fields",
        "sources.<name>.token_env",
        'rooms."<room id>".history',
        "bot.typo",
    }


def test_each_section_has_one_table_and_words_are_whole():
    """A walk-through read two `[rights]` tables and "all- MiniLM" (a model declaring keys
    after a table of its own; a word hyphenated across docstring lines)."""
    page = reference.render()
    headings = [line for line in page.splitlines() if line.startswith("## ")]
    assert len(headings) == len(set(headings)), sorted(h for h in headings if headings.count(h) > 1)
    broken = re.findall(r"\w+- [A-Za-z]\w*", page)
    assert not broken, broken
