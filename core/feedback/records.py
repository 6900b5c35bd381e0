"""The durable record of an answer, built from what the pipeline returned (pure)."""

from __future__ import annotations

import time

from core.feedback.store import AnswerRecord, SourceRecord
from core.requests import Answer, Request
from core.trace import AnswerStep, RephraseStep, find_step


def build_answer_record(
    request: Request, answer: Answer, event_id: str, text: str, *, encrypted: bool
) -> AnswerRecord:
    """Everything needed to learn from a vote on this answer: the question as asked and
    as searched, the sources and their scores, the model and the prompt version; and
    whether it was said in an encrypted room (`encrypted`)."""
    written = find_step(answer.trace, AnswerStep)
    rephrased = find_step(answer.trace, RephraseStep)
    return AnswerRecord(
        answer_id=answer.id,
        event_id=event_id,
        room=request.room,
        asker=request.sender,
        question=request.text,
        rephrased=rephrased.question if rephrased else request.text,
        answer=text,
        kind=answer.kind,
        model=written.model if written else "",
        prompt_version=written.prompt_version if written else "",
        trace=[step.record() for step in answer.trace],
        sources=tuple(
            SourceRecord(s.collection or "", s.document_id or "", s.title, s.url or "", s.score)
            for s in answer.sources
        ),
        created=time.time(),
        readers=tuple(dict.fromkeys((request.sender, *request.readers))),
        question_event=request.event or "",
        encrypted=encrypted,
    )
