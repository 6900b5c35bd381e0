""" "remember that ..." is kept and confirmed before any search or model call, in every
mode (the model's pre-step catches the requests this pattern misses)."""

from __future__ import annotations

from collections.abc import Callable

from core import strings
from core.answering import Answerer
from core.config import Settings
from core.memory.memory import ConversationMemory
from core.memory.remember import RememberRequest, parse_remember
from core.requests import Answer, Progress, Request
from core.trace import RememberStep


async def store_memory(
    memory: ConversationMemory, request: Request, wish: RememberRequest, settings: Settings
) -> Answer:
    """Keep the memory and confirm it; the turn is recorded so that "again" has nothing
    to repeat."""
    kept = await memory.remember(request, wish)
    await memory.record_turn(request, request.text, "remembered")
    text = strings.REMEMBERED[wish.scope].format(prefix=settings.bot.command_prefix)
    step = RememberStep(0.0, kept.id, wish.scope)
    return Answer(text, kind="notice", trace=(step,))


class MemoryFirst:
    def __init__(
        self, inner: Answerer, memory: ConversationMemory, settings: Callable[[], Settings]
    ) -> None:
        self.inner = inner
        self.memory = memory
        self.settings = settings

    async def answer(self, request: Request, progress: Progress | None = None) -> Answer:
        wish = parse_remember(request.text)
        if wish is None:
            return await self.inner.answer(request, progress)
        return await store_memory(self.memory, request, wish, self.settings())
