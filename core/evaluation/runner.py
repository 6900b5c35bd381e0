"""Running a question set through the real pipeline (the LLM pipeline when the config
has a model, search-only passages otherwise) and scoring each result.

The guardrails' rate limits and the memory are left out: an evaluation asks many
questions at once, each on its own. Questions are asked as one person in a direct chat,
so collections must be public or the evaluation user must be a mapped reader.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.answering import Answerer, PredeterminedFirst
from core.config import Settings
from core.evaluation.questions import Question
from core.evaluation.scores import score_result
from core.ids import RoomID, UserID
from core.knowledge.documents import SearchFilters
from core.knowledge_base.base import KnowledgeBase
from core.llm.client import LlmClient, LlmError
from core.llm.fencing import fence
from core.llm.prompts import Prompts
from core.llm.tokens import estimate_tokens
from core.passages import PassagesAnswerer
from core.pipeline.answer import AnswerPipeline
from core.requests import Request
from core.rights.readers import ALWAYS
from core.trace import AnswerStep, PrestepStep, RetrieveStep, RightsStep, find_step

ASKER = "@evaluation:localhost"
ROOM = "!evaluation"


class JudgeVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    faithfulness: float = Field(ge=0, le=1)
    correctness: float = Field(ge=0, le=1)


@dataclass
class QuestionResult:
    question: Question
    ranked: list[str]
    answer: str
    kind: str
    cited: list[str]
    seconds: dict[str, float]
    tokens: dict[str, int]
    scores: dict[str, float] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


def document_of(chunk_id: str) -> str:
    """Chunk ids are `collection/document#version#position`."""
    return chunk_id.split("#", 1)[0].split("/", 1)[1]


class Evaluation:
    def __init__(
        self,
        kb: KnowledgeBase,
        settings: Callable[[], Settings],
        prompts: Callable[[], Prompts],
        llm: LlmClient | None,
    ) -> None:
        self.kb = kb
        self.settings = settings
        self.prompts = prompts
        self.llm = llm
        inner: Answerer = (
            AnswerPipeline(llm, kb.retriever, kb.rights, settings, prompts)
            if llm
            else PassagesAnswerer(kb.retriever, kb.rights, settings)
        )
        self.answerer = PredeterminedFirst(inner, settings)

    async def ask(self, question: Question) -> QuestionResult:
        request = Request(
            question.question,
            UserID(ASKER),
            RoomID(ROOM),
            None,
            is_direct=True,
            readers=(UserID(ASKER),),
            knowledge=((RoomID(ROOM), ALWAYS),),
        )
        started = time.perf_counter()
        answer = await self.answerer.answer(request)
        seconds = {step.name: step.seconds for step in answer.trace}
        seconds["total"] = time.perf_counter() - started
        retrieve = find_step(answer.trace, RetrieveStep)
        rights = find_step(answer.trace, RightsStep)
        prestep = find_step(answer.trace, PrestepStep)
        written = find_step(answer.trace, AnswerStep)
        retrieved = list(retrieve.hits) if retrieve else []
        denied = set(rights.denied) if rights else set()
        allowed = [chunk for chunk in retrieved if chunk not in denied]
        ranked = list(dict.fromkeys(document_of(chunk) for chunk in allowed))
        rows = await self.kb.catalog.current_chunks(allowed, SearchFilters(rooms=(ROOM,)))
        top_k = self.settings().retrieval.top_k
        context = "\n".join(rows[c][7] for c in allowed[:top_k] if c in rows)
        result = QuestionResult(
            question,
            ranked,
            answer.text,
            answer.kind,
            [s.document_id for s in answer.sources if s.document_id],
            seconds,
            {
                "prestep_prompt": prestep.tokens if prestep else 0,
                "answer_prompt_estimated": sum(
                    estimate_tokens(m["content"]) for m in (written.prompt if written else [])
                ),
            },
        )
        result.scores = score_result(
            ranked=ranked,
            context=context,
            answer=answer.text,
            cited=result.cited,
            refused=answer.kind == "refusal",
            expected_ids=question.expected_ids,
            expected_answer=question.expected_answer,
        )
        if self.llm is not None and answer.kind == "answer":
            result.scores.update(await self._judge(question, context, answer.text))
        return result

    async def _judge(self, question: Question, context: str, answer: str) -> dict[str, float]:
        """LLM-as-judge: is the answer supported by its context, and is it right?"""
        assert self.llm is not None
        messages = self.prompts().messages(
            "judge",
            question=fence(question.question),
            expected=fence(question.expected_answer or "(not given)"),
            sources=fence(context),
            answer=fence(answer),
        )
        try:
            verdict, _ = await self.llm.for_task("judge").complete_json(
                messages, JudgeVerdict, "judge"
            )
        except LlmError:
            return {}
        return {
            "judge_faithfulness": verdict.faithfulness,
            "judge_correctness": verdict.correctness,
        }
