"""The question pipeline with a language model: from a Request to a grounded, cited Answer.

1. A greeting is answered at once ("remember that ..." was kept before: MemoryFirst).
   The follow-up rules
   decide whether the recent conversation comes with the question (by default not).
2. One structured pre-step call (toxicity, injection, command or comment, scope,
   remember, rephrasing) runs while the raw question is already being retrieved.
3. The rephrasing is kept only if it keeps the question's meaning; if it is kept, the
   search runs again for it. Documents (rights-checked) and windows of the room's own
   history are searched separately; with the room's memories they ground the answer.
4. The answer streams from the model; markers that point to no given source are removed.
5. The support check runs after the answer is shown (Answer.followup).
   An answer stream that stops early or ends empty is no answer: the client raises
   (IncompleteAnswer, EmptyAnswer) and the caller shows `build_failure_notice` instead.

Two sequential model calls sit on the critical path: the pre-step and the answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace

from core import strings
from core.citations import build_cited_text
from core.config import Settings
from core.knowledge.retrieval import Retriever
from core.llm.client import EmptyAnswer, IncompleteAnswer, LlmClient, LlmError
from core.llm.prompts import Prompts
from core.memory.answerer import store_memory
from core.memory.followup import FollowupDecision, decide_followup
from core.memory.memory import ConversationMemory
from core.memory.remember import RememberRequest, parse_remember
from core.memory.rephrase import decide_rephrasing
from core.pipeline.context import (
    build_conversation,
    build_sources_block,
    fence,
    passage_cost,
)
from core.pipeline.grounding import build_audience, fetch_context_hits
from core.pipeline.prestep import PrestepVerdict, decide_from_verdict, decide_locally
from core.pipeline.recall import build_memories_block
from core.pipeline.sources import Sources, SourcesFinder
from core.pipeline.support import build_collections_list, build_support_check
from core.requests import Answer, Progress, Request, Source
from core.rights.checker import RightsChecker
from core.timerange import TimeExpressionFinder
from core.trace import AnswerStep, FollowupStep, LocalStep, PrestepStep, RephraseStep, Step

# Only reached in rooms that allow general answers.
NO_SOURCES_GENERAL = (
    "(No source was found. This room allows general answers: answer from general "
    "knowledge, say first that no document covers it, and cite nothing.)"
)
NO_SOURCES_MEMORIES = (
    "(No source was found. Answer only from the memories below; if they do not answer "
    "the question, say that you do not know. Cite nothing.)"
)


class AnswerPipeline:
    def __init__(
        self,
        llm: LlmClient,
        retriever: Retriever,
        rights: RightsChecker,
        settings: Callable[[], Settings],
        prompts: Callable[[], Prompts],
        *,
        memory: ConversationMemory | None = None,
        times: TimeExpressionFinder | None = None,
    ) -> None:
        self.llm = llm
        self.retriever = retriever
        self.settings = settings
        self.prompts = prompts
        self.memory = memory
        self.finder = SourcesFinder(retriever, rights, memory, times or TimeExpressionFinder())

    async def answer(self, request: Request, progress: Progress | None = None) -> Answer:
        settings = self.settings()
        if decide_locally(request.text) == "greeting":
            text = strings.GREETING_REPLY.format(prefix=settings.bot.command_prefix)
            return Answer(text, kind="notice", trace=(LocalStep(0.0, "greeting"),))
        followup = await self._followup(request, settings)
        recent = request.recent if followup.use_previous else ()
        audience = build_audience(request, settings)
        fast = asyncio.create_task(self.finder.find(request, request.text, audience, settings))
        try:
            verdict, prestep = await self._prestep(request, recent, settings)
        except BaseException:
            fast.cancel()
            raise
        trace: list[Step] = [FollowupStep(0.0, followup.use_previous, followup.reason), prestep]
        decision = decide_from_verdict(verdict, settings.pipeline.toxicity_threshold)
        if decision != "answer":
            fast.cancel()
            await self._record(request, request.text, decision)
            return self._declined(decision, settings, tuple(trace))
        if verdict.remember and self.memory is not None:
            fast.cancel()
            fact = parse_remember(verdict.standalone_question) or RememberRequest(
                "room", verdict.standalone_question or request.text
            )
            stored = await store_memory(self.memory, request, fact, settings)
            return replace(stored, trace=(*trace, *stored.trace))
        conversation = build_conversation(recent, settings.pipeline.context_tokens // 4)
        question, check = decide_rephrasing(
            request.text,
            verdict.standalone_question,
            conversation,
            settings.memory.rephrase_min_chrf,
            markers=_marker_words(settings),
        )
        trace.append(
            RephraseStep(0.0, question, verdict.standalone_question, check.accepted,
                         check.reason, check.chrf)
        )  # fmt: skip
        if question == request.text:
            sources = await fast
        else:
            fast.cancel()
            sources = await self.finder.find(request, question, audience, settings)
        trace += sources.trace
        general = settings.room(request.room).general_answers
        if sources.unavailable and not sources.hits and not sources.memories:
            await self._record(request, question, "unavailable")
            return Answer(
                strings.SEARCH_UNAVAILABLE, kind="notice", trace=tuple(trace), reason="unavailable"
            )
        if not sources.hits and not sources.memories and not general:
            await self._record(request, question, "nothing_found")
            text = strings.NOTHING_FOUND
            if sources.encrypted_left_out:
                text += "\n\n" + strings.ENCRYPTED_LEFT_OUT
            return Answer(text, kind="refusal", trace=tuple(trace), reason="nothing_found")
        answer = await self._grounded_answer(
            request, question, conversation, sources, settings, trace, progress
        )
        await self._record(request, question, "answered")
        return answer

    async def _followup(self, request: Request, settings: Settings) -> FollowupDecision:
        previous = await self.memory.previous_turn(request) if self.memory else None
        return decide_followup(
            request.text,
            in_bot_conversation=request.in_bot_conversation,
            previous=previous,
            again_words=settings.memory.again_words,
            amend_words=settings.memory.amend_words,
        )

    async def _record(self, request: Request, question: str, outcome: str) -> None:
        if self.memory is not None:
            await self.memory.record_turn(request, question, outcome)

    async def _prestep(
        self, request: Request, recent, settings: Settings
    ) -> tuple[PrestepVerdict, PrestepStep]:
        started = time.perf_counter()
        messages = self.prompts().messages(
            "prestep",
            collections=build_collections_list(settings),
            conversation=build_conversation(recent, settings.pipeline.context_tokens // 4),
            question=fence(request.text),
        )
        verdict, completion = await self.llm.complete_json(messages, PrestepVerdict, "prestep")
        step = PrestepStep(
            time.perf_counter() - started, verdict.model_dump(), messages, completion.prompt_tokens
        )
        return verdict, step

    def _declined(self, decision: str, settings: Settings, trace: tuple[Step, ...]) -> Answer:
        if decision == "toxic":
            return Answer(strings.TOXIC_DECLINED, "refusal", trace=trace, reason=decision)
        if decision == "injection":
            return Answer(strings.INJECTION_DECLINED, "refusal", trace=trace, reason=decision)
        if decision == "comment":
            return Answer(strings.COMMENT_ACK, "notice", trace=trace, reason=decision)
        text = strings.OUT_OF_SCOPE.format(collections=build_collections_list(settings))
        return Answer(text, "refusal", trace=trace, reason=decision)

    async def _grounded_answer(
        self,
        request: Request,
        question: str,
        conversation: str,
        sources: Sources,
        settings: Settings,
        trace: list[Step],
        progress: Progress | None,
    ) -> Answer:
        budget = settings.pipeline.context_tokens
        # Three quarters of the context for sources: the room's history windows, and the
        # documents' passages filling the rest.
        share = budget * 3 // 4
        room = share - sum(passage_cost(hit) for hit in sources.history)
        passages = await fetch_context_hits(self.retriever, sources.documents, room)
        sources_block, given = build_sources_block(passages + sources.history, share)
        messages = self.prompts().messages(
            "answer",
            collections=build_collections_list(settings),
            sources=sources_block
            or (
                NO_SOURCES_GENERAL
                if settings.room(request.room).general_answers
                else NO_SOURCES_MEMORIES
            ),
            memories=build_memories_block(sources.memories, budget // 8),
            conversation=conversation,
            # The rewritten question is the model's echo of the asker's text: fenced too.
            question=fence(question),
        )
        started = time.perf_counter()
        text = ""
        async for piece in self.llm.stream(messages):
            text += piece
            if progress:
                await progress(text)
        cited_text, cited = build_cited_text(
            text, given, key=lambda h: (h.collection, h.document_id)
        )
        if sources.unchecked:
            cited_text += "\n\n" + strings.SOURCES_UNCHECKED
        if sources.unavailable:
            cited_text += "\n\n" + strings.SEARCH_PARTLY_UNAVAILABLE
        if sources.encrypted_left_out:
            cited_text += "\n\n" + strings.ENCRYPTED_LEFT_OUT
        trace.append(
            AnswerStep(time.perf_counter() - started, messages, text, self.llm.model,
                       self.prompts().version)
        )  # fmt: skip
        cited_sources = tuple(
            Source(h.title, h.url or None, h.collection, h.document_id, h.score) for h in cited
        )
        followup = (
            build_support_check(self.llm, self.prompts, sources_block, cited_text)
            if settings.pipeline.support_check and given
            else None
        )
        return Answer(cited_text, sources=cited_sources, trace=tuple(trace), followup=followup)


def build_failure_notice(error: LlmError, *, show_partial: bool = True) -> str:
    """The notice in place of an answer the model did not give: for an incomplete one,
    what it wrote so far, quoted and marked incomplete (with `show_partial`, i.e. while
    the readers it was written for are still all who read it); else the apology."""
    partial = error.partial if isinstance(error, IncompleteAnswer) and show_partial else ""
    # No source is listed under it, so its citation markers would point at nothing.
    text = build_cited_text(partial, ())[0].strip()
    if not text:
        return strings.LLM_FAILED
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines())
    return strings.LLM_INCOMPLETE.format(partial=quoted)


def failure_cause(error: LlmError) -> str:
    """The cause a failed answer is counted under (`bot_failures_total{cause}`)."""
    if isinstance(error, IncompleteAnswer):
        return "llm_incomplete"
    if isinstance(error, EmptyAnswer):
        return "llm_empty"
    return "llm"


def _marker_words(settings: Settings) -> frozenset[str]:
    words = (*settings.memory.again_words, *settings.memory.amend_words)
    return frozenset(part for word in words for part in word.lower().split())
