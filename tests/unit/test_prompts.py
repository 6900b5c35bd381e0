"""Prompts: shipped ones load, admins' overrides apply, and typos are config errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import ConfigError, parse_config
from core.llm.prompts import load_prompts

MATRIX = '[matrix]\nhomeserver = "http://x"\nuser_id = "@b:x"\npassword = "p"\n'


def settings(prompts: str):
    return parse_config(MATRIX + prompts, origin="bot.toml", env={}, base_dir=Path("."))


def test_the_shipped_prompts_load_and_render():
    prompts = load_prompts()
    system, user = prompts.messages(
        "answer",
        collections="- handbook",
        language="German",
        sources="<source n=1>x</source>",
        memories="",
        conversation="",
        question="Why?",
    )
    assert system["role"] == "system" and "- handbook" in system["content"]
    assert "Write the answer in German" in system["content"]
    assert user["content"].endswith("<question>\nWhy?\n</question>")


def test_an_override_replaces_one_part_and_marks_the_version():
    config = settings('[prompts.answer]\nuser = "Sources:\\n{sources}\\nQ: {question}"')
    prompts = load_prompts(config.prompts.overrides())
    _, user = prompts.messages(
        "answer", collections="", language="", sources="S", conversation="C", question="Q?"
    )
    assert user["content"] == "Sources:\nS\nQ: Q?"
    assert "You are a workplace assistant" in prompts.parts[("answer", "system")]
    assert prompts.version.endswith("+overrides") and not load_prompts().version.endswith(
        "+overrides"
    )


ERRORS = {
    "typo in a placeholder": (
        '[prompts.answer]\nuser = "{sources} {questoin}"',
        "prompts.answer.user: unknown placeholder {questoin} (known: {conversation}, {memories}, {question}, {sources})",
    ),
    "required placeholder left out": (
        '[prompts.answer]\nuser = "Just answer: {question}"',
        "prompts.answer.user: the placeholder {sources} is required",
    ),
    "stray brace": (
        '[prompts.prestep]\nsystem = "Return {json"',
        "prompts.prestep.system: not a valid template",
    ),
    "unknown prompt": ('[prompts.greeting]\nsystem = "Hi"', "prompts.greeting: unknown key"),
    "unknown part": ('[prompts.answer]\nassistant = "Hi"', "prompts.answer.assistant: unknown key"),
}


@pytest.mark.parametrize("text,expected", ERRORS.values(), ids=ERRORS.keys())
def test_prompt_typos_are_config_errors_naming_the_key(text, expected):
    with pytest.raises(ConfigError) as caught:
        settings(text)
    assert any(expected in problem for problem in caught.value.problems), caught.value.problems
