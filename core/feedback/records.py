"""The durable record of an answer, built from what the pipeline returned (pure)."""

from __future__ import annotations

import time
from dataclasses import asdict

from core.feedback.store import AnswerRecord, SourceRecord
from core.requests import Answer, Request


def _step(answer: Answer, name: str) -> dict:
    return next((step.details for step in answer.trace if step.name == name), {})


def build_answer_record(request: Request, answer: Answer, event_id: str, text: str) -> AnswerRecord:
    """Everything needed to learn from a vote on this answer: the question as asked and
    as searched, the sources and their scores, the model and the prompt version."""
    written = _step(answer, "answer")
    return AnswerRecord(
        answer_id=answer.id,
        event_id=event_id,
        room=request.room,
        asker=request.sender,
        question=request.text,
        rephrased=_step(answer, "rephrase").get("question", request.text),
        answer=text,
        kind=answer.kind,
        model=written.get("model", ""),
        prompt_version=written.get("prompt_version", ""),
        trace=[asdict(step) for step in answer.trace],
        sources=tuple(
            SourceRecord(s.collection or "", s.document_id or "", s.title, s.url or "", s.score)
            for s in answer.sources
        ),
        created=time.time(),
        readers=tuple(dict.fromkeys((request.sender, *request.readers))),
    )
