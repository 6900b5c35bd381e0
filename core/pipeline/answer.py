"""The question pipeline with a language model: from a Request to a grounded, cited Answer.

1. Local checks (a greeting) answer at once. Otherwise one structured pre-step call
   (toxicity, command or comment, scope, remember, rewrite) runs while the raw question
   is already being retrieved and rights-checked.
2. If the rewrite changed the question, retrieve again for it; else use the fast result.
3. The answer streams from the model, grounded in the numbered sources; markers that
   point to no given source are removed. Nothing found: the bot says so, unless the
   room allows general answers.
4. The support check runs after the answer is shown (Answer.followup).

Two sequential model calls sit on the critical path: the pre-step and the answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core import strings
from core.citations import build_cited_text
from core.config import Settings
from core.knowledge.retrieval import Retriever
from core.llm.client import LlmClient, LlmError
from core.llm.prompts import Prompts
from core.pipeline.context import build_conversation, build_sources_block
from core.pipeline.grounding import Grounding, build_audience, fetch_grounding
from core.pipeline.prestep import (
    PrestepVerdict,
    decide_from_verdict,
    decide_locally,
    decide_question,
)
from core.requests import Answer, Progress, Request, Source, TraceStep
from core.rights.checker import RightsChecker

# Only reached in rooms that allow general answers.
NO_SOURCES_GENERAL = (
    "(No source was found. This room allows general answers: answer from general "
    "knowledge, say first that no document covers it, and cite nothing.)"
)


class SupportVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    risk: Literal["low", "medium", "high"]


def build_collections_list(settings: Settings) -> str:
    return "\n".join(
        f"- {name}: {collection.description or 'documents'}"
        for name, collection in settings.collections.items()
    )


class AnswerPipeline:
    def __init__(
        self,
        llm: LlmClient,
        retriever: Retriever,
        rights: RightsChecker,
        settings: Callable[[], Settings],
        prompts: Callable[[], Prompts],
    ) -> None:
        self.llm = llm
        self.retriever = retriever
        self.rights = rights
        self.settings = settings
        self.prompts = prompts

    async def answer(self, request: Request, progress: Progress | None = None) -> Answer:
        settings = self.settings()
        if decide_locally(request.text) == "greeting":
            text = strings.GREETING_REPLY.format(prefix=settings.bot.command_prefix)
            return Answer(
                text, kind="notice", trace=(TraceStep("local", 0.0, {"decision": "greeting"}),)
            )
        audience = build_audience(request, settings)
        top_k = settings.retrieval.top_k
        fast = asyncio.create_task(
            fetch_grounding(self.retriever, self.rights, request.text, audience, top_k)
        )
        try:
            verdict, prestep = await self._prestep(request, settings)
        except BaseException:
            fast.cancel()
            raise
        trace = [prestep]
        decision = decide_from_verdict(verdict, settings.pipeline.toxicity_threshold)
        if decision != "answer":
            fast.cancel()
            return self._declined(decision, settings, tuple(trace))
        question = decide_question(request.text, verdict)
        if question == request.text:
            grounding = await fast
        else:
            fast.cancel()
            grounding = await fetch_grounding(
                self.retriever, self.rights, question, audience, top_k
            )
        trace += grounding.trace
        general = settings.room(request.room).general_answers
        if not grounding.hits and not general:
            return Answer(strings.NOTHING_FOUND, kind="refusal", trace=tuple(trace))
        return await self._grounded_answer(request, question, grounding, settings, trace, progress)

    async def _prestep(
        self, request: Request, settings: Settings
    ) -> tuple[PrestepVerdict, TraceStep]:
        started = time.perf_counter()
        messages = self.prompts().messages(
            "prestep",
            collections=build_collections_list(settings),
            conversation=build_conversation(request.recent, settings.pipeline.context_tokens // 4),
            question=request.text,
        )
        verdict, completion = await self.llm.complete_json(messages, PrestepVerdict, "prestep")
        details = {
            "verdict": verdict.model_dump(),
            "prompt": messages,
            "tokens": completion.prompt_tokens,
        }
        return verdict, TraceStep("prestep", time.perf_counter() - started, details)

    def _declined(self, decision: str, settings: Settings, trace: tuple[TraceStep, ...]) -> Answer:
        if decision == "toxic":
            return Answer(strings.TOXIC_DECLINED, kind="refusal", trace=trace)
        if decision == "comment":
            return Answer(strings.COMMENT_ACK, kind="notice", trace=trace)
        text = strings.OUT_OF_SCOPE.format(collections=build_collections_list(settings))
        return Answer(text, kind="refusal", trace=trace)

    async def _grounded_answer(
        self,
        request: Request,
        question: str,
        grounding: Grounding,
        settings: Settings,
        trace: list[TraceStep],
        progress: Progress | None,
    ) -> Answer:
        budget = settings.pipeline.context_tokens
        sources_block, given = build_sources_block(grounding.hits, budget * 3 // 4)
        messages = self.prompts().messages(
            "answer",
            collections=build_collections_list(settings),
            sources=sources_block or NO_SOURCES_GENERAL,
            conversation=build_conversation(request.recent, budget // 4),
            question=question,
        )
        started = time.perf_counter()
        text = ""
        async for piece in self.llm.stream(messages):
            text += piece
            if progress:
                await progress(text)
        cited_text, cited = build_cited_text(text, given)
        if grounding.unchecked:
            cited_text += "\n\n" + strings.SOURCES_UNCHECKED
        trace.append(
            TraceStep("answer", time.perf_counter() - started, {"prompt": messages, "raw": text})
        )
        sources = tuple(Source(h.title, h.url or None, h.collection, h.document_id) for h in cited)
        followup = (
            self._support_check(sources_block, cited_text)
            if settings.pipeline.support_check and given
            else None
        )
        return Answer(cited_text, sources=sources, trace=tuple(trace), followup=followup)

    def _support_check(self, sources_block: str, answer_text: str):
        async def check() -> str | None:
            messages = self.prompts().messages("support", sources=sources_block, answer=answer_text)
            try:
                verdict, _ = await self.llm.complete_json(messages, SupportVerdict, "support")
            except LlmError:
                return None
            return strings.SUPPORT_BADGES[verdict.risk]

        return check
