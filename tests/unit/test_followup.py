"""When the previous turn comes with a question: the rules, as a table of named cases."""

from __future__ import annotations

import pytest

from core.config.memory import MemorySettings
from core.memory.followup import decide_followup
from core.memory.store import Turn

WORDS = MemorySettings()
ANSWERED = Turn("What are the sales figures for 2025?", "", "answered", 0.0)
TOXIC = Turn("you idiot", "", "toxic", 0.0)
OUT_OF_SCOPE = Turn("who wins the cup?", "", "out_of_scope", 0.0)

CASES = {
    "by default a question stands alone": ("How do I book a train?", False, ANSWERED, False),
    "the first question has nothing to follow": ("do it again", False, None, False),
    "an again word": ("Can you redo that?", False, ANSWERED, True),
    "an again phrase": ("once more please", False, ANSWERED, True),
    "an amend word": ("also for 2024", False, ANSWERED, True),
    "an amend phrase": ("what about Berlin?", False, ANSWERED, True),
    "words match whole words only": ("What is the toolchain?", False, ANSWERED, False),
    "a reply to the bot": ("and the price?", True, ANSWERED, True),
    "in the bot's thread with no stored turn": ("and the price?", True, None, True),
    "suspended after a toxic turn, even with again": ("do it again", False, TOXIC, False),
    "suspended after a toxic turn, even in the thread": ("and now?", True, TOXIC, False),
    "suspended after an out-of-scope turn": ("also for Berlin", False, OUT_OF_SCOPE, False),
}


@pytest.mark.parametrize("text,in_thread,previous,expected", CASES.values(), ids=CASES.keys())
def test_decide_followup(text, in_thread, previous, expected):
    decision = decide_followup(
        text,
        in_bot_conversation=in_thread,
        previous=previous,
        again_words=WORDS.again_words,
        amend_words=WORDS.amend_words,
    )
    assert decision.use_previous is expected, decision.reason
