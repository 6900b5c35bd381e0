"""The question pipeline with a language model: from a Request to a grounded, cited Answer.

1. A greeting is answered at once ("remember that ..." was kept before: MemoryFirst).
   The follow-up rules
   decide whether the recent conversation comes with the question (by default not).
2. One structured pre-step call (toxicity, injection, command or comment, scope,
   remember, rephrasing) runs while the raw question is already being retrieved.
3. The rephrasing is kept only if it keeps the question's meaning; if it is kept, the
   search runs again for it. Documents (rights-checked) and windows of the room's own
   history are searched separately; with the room's memories they ground the answer.
4. The answer streams from the model (its inline reasoning never shown), fitted to the
   model's context window; citation markers in the styles models write are read, those
   that point to no given source removed.
5. The support check runs after the answer is shown (Answer.followup).
   An answer the model did not give (a stream that stops early or ends empty, a
   time-out, a server error, ...: an LlmError) is told as what happened
   (core/pipeline/failures.py), followed by the passages search found, as search-only
   mode shows them (`build_fallback_answer`); with nothing found, the caller shows the
   notice alone. A pre-step that fails lets the question through as asked.

One model call sits on the critical path of a question that needs nothing from the
conversation: its answer starts beside the pre-step, its words held until the pre-step
lets it through (core/pipeline/speculation.py); a follow-up waits for the pre-step.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace

from core import strings
from core.citations import build_cited_text, build_streamed_text
from core.config import Settings
from core.i18n.language import language_name
from core.knowledge.documents import Hit
from core.knowledge.search.retrieval import Retriever
from core.llm.client import (
    IncompleteAnswer,
    LlmClient,
    LlmError,
    LlmPromptTooLong,
    LlmUnreachable,
)
from core.llm.fencing import fence
from core.llm.prompts import Prompts
from core.llm.window import decide_answer_tokens, decide_prompt_limit, decide_sources_share
from core.memory.answerer import store_memory
from core.memory.followup import FollowupDecision, decide_followup
from core.memory.memory import ConversationMemory
from core.memory.remember import RememberRequest, parse_remember
from core.memory.rephrase import decide_rephrasing
from core.pipeline.context import build_conversation, build_sources_block, passage_cost
from core.pipeline.failures import build_fallback_answer, failure_cause
from core.pipeline.grounding import build_audience, fetch_context_hits
from core.pipeline.nothing_found import build_nothing_found
from core.pipeline.prestep import (
    PrestepVerdict,
    build_default_verdict,
    decide_from_verdict,
    decide_locally,
    decide_translations,
)
from core.pipeline.quoting import fetch_quoted_lines
from core.pipeline.recall import build_memories_block
from core.pipeline.sources import Sources, SourcesFinder
from core.pipeline.speculation import HeldProgress, drop
from core.pipeline.support import build_collections_list, build_support_check
from core.requests import Answer, Progress, Request
from core.rights.checker import RightsChecker
from core.sources import build_source
from core.timerange import TimeExpressionFinder
from core.trace import (
    AnswerStep,
    FallbackStep,
    FollowupStep,
    LocalStep,
    Messages,
    PrestepStep,
    RephraseStep,
    Step,
)

log = logging.getLogger(__name__)

# Tries at cutting the sources down to the model's window.
FIT_ATTEMPTS = 4
# Only reached in rooms that allow general answers.
NO_SOURCES_GENERAL = (
    "(No source was found. This room allows general answers: answer from general "
    "knowledge, say first that no document covers it, and cite nothing.)"
)
NO_SOURCES_MEMORIES = (
    "(No source was found. Answer only from the memories below; if they do not answer "
    "the question, say that you do not know. Cite nothing.)"
)

# The answer's language when the asker's is not known (too short to tell).
ASKERS_LANGUAGE = "the language of the question"


def _collection_languages(settings: Settings) -> set[str]:
    return {collection.language for collection in settings.collections.values()}


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
        # The answer's own calls (`[llm.tasks.answer]` may name another model).
        self._answering = llm.for_task("answer")
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
        conversation = build_conversation(recent, settings.pipeline.context_tokens // 4)
        held = HeldProgress(progress)
        # Needing nothing of the conversation, the answer starts beside the pre-step (see
        # core/pipeline/speculation.py); its words wait for the pre-step's verdict.
        early = (
            asyncio.create_task(self._early_answer(request, conversation, fast, settings, held))
            if settings.pipeline.early_answer and not followup.use_previous
            else None
        )
        # Whatever ends this (a verdict, an error, a cancellation), nothing started here
        # outlives it: an early answer left running could stream to readers it was not
        # written for.
        try:
            verdict, prestep = await self._prestep(request, recent, settings)
            trace: list[Step] = [FollowupStep(0.0, followup.use_previous, followup.reason), prestep]
            decision = decide_from_verdict(verdict, settings.pipeline.toxicity_threshold)
            if decision != "answer":
                await self._record(request, request.text, decision)
                return self._declined(decision, settings, tuple(trace))
            if verdict.remember and self.memory is not None:
                fact = parse_remember(verdict.standalone_question) or RememberRequest(
                    "room", verdict.standalone_question or request.text
                )
                stored = await store_memory(self.memory, request, fact, settings)
                return replace(stored, trace=(*trace, *stored.trace))
            question, check = decide_rephrasing(
                request.text,
                verdict.standalone_question,
                conversation,
                settings.memory.rephrase_min_chrf,
                markers=_marker_words(settings),
            )
            trace.append(
                RephraseStep(
                    0.0,
                    question,
                    verdict.standalone_question,
                    check.accepted,
                    check.reason,
                    check.chrf,
                )
            )
            translations = decide_translations(verdict, question, _collection_languages(settings))
            if question == request.text and not translations:
                sources = await fast
            else:
                fast.cancel()
                if early is not None:
                    # Rewritten or translated: the early answer was for other words or
                    # other sources, never shown.
                    drop(early)
                    early = None
                sources = await self.finder.find(
                    request, question, audience, settings, translations
                )
            trace += sources.trace
            if early is not None:
                await held.release()
                found = await early
                if found is not None:
                    answer, answer_trace = found
                    await self._record(request, question, "answered")
                    return replace(answer, trace=(*trace, *answer_trace))
            general = settings.room(request.room).general_answers
            if sources.unavailable and not sources.hits and not sources.memories:
                await self._record(request, question, "unavailable")
                return Answer(
                    strings.SEARCH_UNAVAILABLE,
                    kind="notice",
                    trace=tuple(trace),
                    reason="unavailable",
                )
            if not sources.hits and not sources.memories and not general:
                await self._record(request, question, "nothing_found")
                text = build_nothing_found(request, settings)
                if sources.encrypted_left_out:
                    text += "\n\n" + strings.ENCRYPTED_LEFT_OUT
                return Answer(text, kind="refusal", trace=tuple(trace), reason="nothing_found")
            answer = await self._grounded_answer(
                request, question, conversation, sources, settings, trace, progress
            )
            await self._record(request, question, "answered")
            return answer
        finally:
            fast.cancel()
            if early is not None:
                drop(early)

    async def _early_answer(
        self,
        request: Request,
        conversation: str,
        fast: asyncio.Task[Sources],
        settings: Settings,
        progress: HeldProgress,
    ) -> tuple[Answer, list[Step]] | None:
        """The answer to the question as asked, from the sources found for it; None when
        they call for a notice instead (nothing found, search unavailable)."""
        sources = await asyncio.shield(fast)
        if not sources.hits and not sources.memories:
            return None
        steps: list[Step] = []
        answer = await self._grounded_answer(
            request, request.text, conversation, sources, settings, steps, progress
        )
        return answer, steps

    async def _refused_for_length(
        self, error: LlmPromptTooLong | IncompleteAnswer, messages: Messages, window: int | None
    ) -> LlmPromptTooLong | None:
        """Whether a failed answer was a prompt over the model's window. Some servers say
        so only to a request that is not streamed (llama-cpp-python ends the stream with
        nothing): an empty stream, while the window is not known, is asked about once
        more, for one token, without streaming."""
        if isinstance(error, LlmPromptTooLong):
            return error
        if error.partial or window is not None:
            return None
        # Twice: a server that broke off the stream may have left its connection dead.
        for _ in range(2):
            try:
                await self._answering.complete(messages, "answer", max_tokens=1)
                return None
            except LlmPromptTooLong as refused:
                return refused
            except LlmUnreachable:
                continue
            except LlmError:
                return None
        return None

    async def _prompt(
        self,
        request: Request,
        question: str,
        conversation: str,
        sources: Sources,
        settings: Settings,
        share: int,
    ) -> tuple[Messages, list[Hit], str]:
        """The answer's prompt with `share` (in passage cost) for the sources: the room's
        history windows, and the documents' passages filling the rest; the sources given,
        and their block."""
        room = share - sum(passage_cost(hit) for hit in sources.history)
        passages = await fetch_context_hits(self.retriever, sources.documents, room)
        sources_block, given = build_sources_block(passages + sources.history, share)
        messages = self.prompts().messages(
            "answer",
            collections=build_collections_list(settings),
            language=language_name(request.language) if request.language else ASKERS_LANGUAGE,
            sources=sources_block
            or (
                NO_SOURCES_GENERAL
                if settings.room(request.room).general_answers
                else NO_SOURCES_MEMORIES
            ),
            memories=build_memories_block(sources.memories, settings.pipeline.context_tokens // 8),
            conversation=conversation,
            # The rewritten question is the model's echo of the asker's text: fenced too.
            question=fence(question),
        )
        return messages, given, sources_block

    async def _fitted_prompt(
        self,
        build: Callable[[int], Awaitable[tuple[Messages, list[Hit], str]]],
        has_sources: bool,
        share: int,
        window: int | None,
        answer_tokens: int,
    ) -> tuple[tuple[Messages, list[Hit], str], int]:
        """The prompt `build` makes for a share of the sources (see `_prompt`), its
        sources cut until it fits the window with the answer's tokens (when the window is
        known), and the share they got; raises LlmPromptTooLong when even one source does
        not fit."""
        prompt = await build(share)
        if window is None:
            return prompt, share
        limit = decide_prompt_limit(window, answer_tokens)
        bare: int | None = None
        for _ in range(FIT_ATTEMPTS):
            tokens = await self._answering.count_tokens(prompt[0])
            # Fitted, unless the sources were cut to none (then it does not fit).
            if tokens <= limit and (prompt[1] or not has_sources):
                return prompt, share
            if bare is None:
                bare = await self._answering.count_tokens((await build(0))[0])
            share = decide_sources_share(share, tokens, limit, bare)
            if share == 0:
                break
            prompt = await build(share)
        raise LlmPromptTooLong(
            f"the question and its context take more than {limit} of the model's {window} "
            "tokens, even with fewer sources",
            window,
        )

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
            languages=", ".join(
                f"{language_name(code)} ({code})"
                for code in sorted(_collection_languages(settings))
            ),
            conversation=build_conversation(recent, settings.pipeline.context_tokens // 4),
            question=fence(request.text),
        )
        try:
            verdict, completion = await self.llm.for_task("prestep").complete_json(
                messages, PrestepVerdict, "prestep"
            )
        except LlmError as exc:
            # No verdict: the question is searched and answered as asked (the local
            # guardrails have run before), rather than the asker left with a failure.
            cause = failure_cause(exc)
            log.warning(
                "the pre-step failed (%s: %s): the question is answered as asked",
                cause,
                exc.setting,
            )
            verdict = build_default_verdict(request.text)
            seconds = time.perf_counter() - started
            return verdict, PrestepStep(seconds, verdict.model_dump(), messages, 0, cause)
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
        """The model's answer; when its call fails and search found something, the
        failure notice with the passages found (as search-only mode shows them)."""
        started = time.perf_counter()
        try:
            return await self._model_answer(
                request, question, conversation, sources, settings, trace, progress
            )
        except LlmError as error:
            quoted = await fetch_quoted_lines(self.memory, question, sources)
            fallback = build_fallback_answer(error, question, sources, settings, quoted)
            if fallback is None:
                raise
            cause = failure_cause(error)
            log.warning(
                "the answer failed (%s: %s): the passages found are shown", cause, error.setting
            )
            trace.append(FallbackStep(time.perf_counter() - started, cause))
            return replace(fallback, trace=tuple(trace))

    async def _model_answer(
        self,
        request: Request,
        question: str,
        conversation: str,
        sources: Sources,
        settings: Settings,
        trace: list[Step],
        progress: Progress | None,
    ) -> Answer:
        share = settings.pipeline.context_tokens * 3 // 4
        build = functools.partial(self._prompt, request, question, conversation, sources, settings)
        started = time.perf_counter()
        for attempt in (1, 2):
            # Fitted to the model's window where it is known; a refusal for length teaches
            # the window (or halves the sources when it names none) and is tried once more.
            window = await self._answering.context_window()
            answer_tokens = decide_answer_tokens(window, self._answering.settings.answer_tokens)
            (messages, given, sources_block), share = await self._fitted_prompt(
                build, bool(sources.hits), share, window, answer_tokens
            )
            text, reasoning = "", 0
            try:
                # max_tokens only within a known window: a reasoning model spends tokens on
                # its thoughts first, and an unknown window gives no reason to cut it.
                limits = {"max_tokens": answer_tokens} if window is not None else {}
                async for so_far in self._answering.stream(messages, **limits):
                    text, reasoning = so_far.text, so_far.reasoning_chars
                    if progress:
                        await progress(build_streamed_text(text, given, key=document_of))
                break
            except (LlmPromptTooLong, IncompleteAnswer) as exc:
                too_long = await self._refused_for_length(exc, messages, window)
                if attempt == 2 or text or too_long is None:
                    raise
                log.warning("the prompt was over the model's window: fitted again (%s)", exc)
                self._answering.learn_window(too_long)
                if too_long.window is None:
                    share //= 2
        passages: dict[tuple[str, str], list[Hit]] = {}
        cited_text, cited = build_cited_text(
            text,
            given,
            key=document_of,
            on_cite=lambda hit: passages.setdefault(document_of(hit), []).append(hit),
        )
        # An answer that cites nothing lists what the model was given, marked as consulted:
        # the reader can still check it (and the support check still judges it).
        uncited = not cited and bool(given)
        if uncited:
            consulted: dict[tuple[str, str], Hit] = {}
            for hit in given:
                consulted.setdefault(document_of(hit), hit)
            cited = list(consulted.values())
        if sources.unchecked:
            cited_text += "\n\n" + strings.SOURCES_UNCHECKED
        if sources.unavailable:
            cited_text += "\n\n" + strings.SEARCH_PARTLY_UNAVAILABLE
        if sources.encrypted_left_out:
            cited_text += "\n\n" + strings.ENCRYPTED_LEFT_OUT
        trace.append(
            AnswerStep(
                time.perf_counter() - started,
                messages,
                text,
                self._answering.model,
                self.prompts().version,
                reasoning,
            )
        )
        cited_sources = tuple(build_source(h, passages.get(document_of(h), ())) for h in cited)
        followup = (
            build_support_check(self.llm, self.prompts, sources_block, cited_text)
            if settings.pipeline.support_check and given
            else None
        )
        return Answer(
            cited_text,
            sources=cited_sources,
            trace=tuple(trace),
            followup=followup,
            uncited=uncited,
        )


def document_of(hit: Hit) -> tuple[str, str]:
    return hit.collection, hit.document_id


def _marker_words(settings: Settings) -> frozenset[str]:
    words = (*settings.memory.again_words, *settings.memory.amend_words)
    return frozenset(part for word in words for part in word.lower().split())
