"""Predetermined answers: patterns decide, bad patterns are config errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import ConfigError, parse_config
from core.config.predetermined import PredeterminedAnswer
from core.predetermined import decide_predetermined

ENTRIES = (
    PredeterminedAnswer(patterns=(r"\bemergency (number|phone)\b",), answer="Call 112."),
    PredeterminedAnswer(
        patterns=(r"^who is the ceo\??$", r"\bchief executive\b"), answer="Jane Doe."
    ),
)
CASES = {
    "matches, any case": ("What is the EMERGENCY NUMBER here?", "Call 112."),
    "second pattern of an entry": ("Who is our chief executive?", "Jane Doe."),
    "anchored pattern": ("who is the CEO?", "Jane Doe."),
    "no match": ("What is the emergency exit?", None),
}


@pytest.mark.parametrize("question,expected", CASES.values(), ids=CASES.keys())
def test_decide_predetermined(question, expected):
    assert decide_predetermined(question, ENTRIES) == expected


def test_a_broken_pattern_is_a_config_error_naming_the_entry():
    text = '[matrix]\nhomeserver = "http://x"\nuser_id = "@b:x"\npassword = "p"\n[[predetermined]]\npatterns = ["(unclosed"]\nanswer = "x"'
    with pytest.raises(
        ConfigError,
        match=r"predetermined\.0\.patterns: '\(unclosed' is not a valid regular expression",
    ):
        parse_config(text, origin="bot.toml", env={}, base_dir=Path("."))
