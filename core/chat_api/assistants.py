"""The answerers of the chat API's models: the bot's own pipeline (guardrails, fixed
answers, retrieval bounded by rights, the model or search-only passages), each bounded
to its assistant's collections, prompt and model. No room knowledge: no memory is given,
and requests name no rooms, so summaries, history and the ledger are out of reach."""

from __future__ import annotations

import logging
from collections.abc import Callable

from core.answering import Answerer, PredeterminedFirst
from core.config import Settings
from core.config.chat_api import AssistantSettings
from core.config.llm import LlmSettings
from core.guardrails.guard import Guarded
from core.guardrails.rate_store import RateLimits
from core.knowledge.search.retrieval import Retriever
from core.knowledge_base.base import KnowledgeBase
from core.llm.client import LlmClient
from core.llm.prompts import Prompts
from core.passages import PassagesAnswerer
from core.pipeline.answer import AnswerPipeline

log = logging.getLogger(__name__)


def build_assistant_settings(settings: Settings, assistant: AssistantSettings) -> Settings:
    """The config as the assistant sees it: only its collections exist (the search, the
    prompt's list of collections and the neighbours of passages all read them here)."""
    if not assistant.collections:
        return settings
    kept = {name: c for name, c in settings.collections.items() if name in assistant.collections}
    return settings.model_copy(update={"collections": kept})


def build_assistant_llm(llm: LlmSettings, assistant: AssistantSettings) -> LlmSettings:
    """[llm], with the assistant's own model for its answers (`[assistants.<n>.llm]`)."""
    if assistant.llm is None:
        return llm
    return llm.model_copy(update={"tasks": {**llm.tasks, "answer": assistant.llm}})


def build_assistant_prompts(prompts: Prompts, name: str, assistant: AssistantSettings) -> Prompts:
    if assistant.answer_system is None:
        return prompts
    parts = {**prompts.parts, ("answer", "system"): assistant.answer_system}
    return Prompts(f"{prompts.version}+{name}", parts)


class Assistants:
    """One answerer per assistant, made again when its section or [llm] changes."""

    def __init__(
        self,
        kb: KnowledgeBase,
        settings: Callable[[], Settings],
        prompts: Callable[[], Prompts],
        limits: RateLimits,
    ) -> None:
        self.kb = kb
        self.settings = settings
        self.prompts = prompts
        self.limits = limits
        self._made: dict[str, tuple[str, Answerer, LlmClient | None]] = {}

    def descriptions(self) -> dict[str, str]:
        return {name: a.description for name, a in self.settings().assistants.items()}

    def answerer(self, name: str) -> Answerer | None:
        """The assistant's answerer, or None when no assistant has this name."""
        current = self.settings()
        assistant = current.assistants.get(name)
        if assistant is None:
            return None
        version = assistant.model_dump_json() + current.llm.model_dump_json()
        made = self._made.get(name)
        if made is not None and made[0] == version:
            return made[1]
        answerer, llm = self._make(name)
        self._made[name] = (version, answerer, llm)
        # The client of the version replaced is left to finish its calls; closing it here
        # could cut an answer being written. It holds only an idle connection pool.
        return answerer

    def _make(self, name: str) -> tuple[Answerer, LlmClient | None]:
        def bounded() -> Settings:
            current = self.settings()
            return build_assistant_settings(current, current.assistants[name])

        def prompts() -> Prompts:
            return build_assistant_prompts(self.prompts(), name, self.settings().assistants[name])

        kb = self.kb
        retriever = Retriever(kb.catalog, kb.vectors, kb.embedders, bounded)
        current = self.settings()
        llm: LlmClient | None = None
        inner: Answerer
        if current.llm.url:
            llm = LlmClient(build_assistant_llm(current.llm, current.assistants[name]))
            inner = AnswerPipeline(llm, retriever, kb.rights, bounded, prompts)
        else:
            inner = PassagesAnswerer(retriever, kb.rights, bounded)
        return Guarded(PredeterminedFirst(inner, bounded), bounded, None, self.limits), llm

    async def close(self) -> None:
        for _, _, llm in self._made.values():
            if llm is not None:
                await llm.close()
        self._made.clear()
