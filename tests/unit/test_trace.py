"""Typed trace steps: read by field, found by kind, kept in the stored form of before."""

from __future__ import annotations

import json

from core.feedback.records import build_answer_record
from core.ids import RoomID, UserID
from core.requests import Answer, Request
from core.trace import AnswerStep, RephraseStep, RetrieveStep, RightsStep, find_step

TRACE = (
    RephraseStep(0.0, "leave days?", "How many leave days?", True, "ok", 71.5),
    RetrieveStep(0.02, "leave days?", ("handbook/leave#h#0", "handbook/pay#h#3")),
    RightsStep(0.01, "room readers", denied=("handbook/pay#h#3",), unchecked=False),
    AnswerStep(0.8, [{"role": "user", "content": "…"}], "27 days [1]", "m-7b", "2026-11-21.2"),
)


def test_steps_are_found_by_kind():
    assert find_step(TRACE, RightsStep).denied == ("handbook/pay#h#3",)
    assert find_step(TRACE[:1], AnswerStep) is None


def test_the_feedback_record_reads_the_typed_steps_and_stores_the_old_form():
    request = Request("leave?", UserID("@ann:x"), RoomID("!r"), None, readers=(UserID("@ann:x"),))
    record = build_answer_record(
        request, Answer("27 days [1]", trace=TRACE), "$e", "27 days", encrypted=False
    )
    assert record.rephrased == "leave days?" and record.model == "m-7b"
    assert record.prompt_version == "2026-11-21.2"
    stored = json.loads(json.dumps(record.trace))
    assert [step["name"] for step in stored] == ["rephrase", "retrieve", "rights", "answer"]
    assert stored[1] == {
        "name": "retrieve",
        "seconds": 0.02,
        "details": {"question": "leave days?", "hits": ["handbook/leave#h#0", "handbook/pay#h#3"]},
    }
