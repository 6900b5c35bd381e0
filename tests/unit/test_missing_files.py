"""What someone replying to a file the bot never read is told (bot/features/files/missing.py),
and which whole replies ask for a file's summary, in each language the bot speaks."""

from __future__ import annotations

import pytest

from bot.features.files.missing import decide_missing_file_reason
from bot.inbox.commands import decide_summary_request
from core import strings

PDF = {"msgtype": "m.file", "body": "plan.pdf", "info": {"mimetype": "application/pdf"}}
CASES = {
    "files off": (PDF, False, strings.FILE_NOT_KEPT_HERE.format(name="plan.pdf")),
    "shared before files were on": (PDF, True, strings.FILE_SHARED_EARLIER.format(name="plan.pdf")),
    "a kind the bot does not read": (
        {
            "msgtype": "m.file",
            "body": "data.xlsx",
            "info": {"mimetype": "application/vnd.ms-excel"},
        },
        True,
        strings.FILE_UNREADABLE.format(name="data.xlsx", reason=strings.FILE_KIND_UNREAD),
    ),
    "an image the bot could not fetch when asked": (
        {"msgtype": "m.image", "body": "whiteboard.png", "info": {"mimetype": "image/png"}},
        True,
        strings.FILE_SHARED_EARLIER.format(name="whiteboard.png"),
    ),
    "an animation is no image the bot reads": (
        {"msgtype": "m.image", "body": "cat.gif", "info": {"mimetype": "image/gif"}},
        True,
        strings.FILE_UNREADABLE.format(name="cat.gif", reason=strings.FILE_KIND_UNREAD),
    ),
    "the file's own name over its caption": (
        {"msgtype": "m.file", "body": "see page 2", "filename": "plan.pdf"},
        False,
        strings.FILE_NOT_KEPT_HERE.format(name="plan.pdf"),
    ),
    "a text message is no file": ({"msgtype": "m.text", "body": "hello"}, True, None),
    "a broken event": ({"body": 3}, True, None),
}


@pytest.mark.parametrize("content,kept,expected", CASES.values(), ids=CASES.keys())
def test_decide_missing_file_reason(content, kept, expected):
    assert decide_missing_file_reason(content, kept) == expected


# Written apart from the pattern: what people type under a file to get its summary, and
# questions that only contain the word.
ASKS = [
    "summarize this",
    "Summarise it please",
    "sum it up",
    "TL;DR?",
    "summarize the file",
    "fass das zusammen",
    "Fasse die Datei bitte zusammen",
    "Zusammenfassung bitte",
    "résume ça",
    "Résumez-le, s'il vous plaît",
    "un résumé svp",
    "resúmelo",
    "Resume el documento",
    "¿Un resumen, por favor?",
]
QUESTIONS = [
    "summarize the budget part for the board?",
    "what does the summary say about leave?",
    "Was steht in der Zusammenfassung über Urlaub?",
    "Quel est le résumé du chapitre 3 ?",
    "¿Dónde está el resumen de gastos?",
    "this",
]


@pytest.mark.parametrize("text", ASKS)
def test_a_reply_asking_for_a_summary(text):
    assert decide_summary_request(text)


@pytest.mark.parametrize("text", QUESTIONS)
def test_a_question_that_only_mentions_a_summary(text):
    assert not decide_summary_request(text)
