"""The support check after an answer, and the collections list the prompts share."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core import strings
from core.config import Settings
from core.llm.client import LlmClient, LlmError
from core.llm.fencing import fence
from core.llm.prompts import Prompts


class SupportVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    risk: Literal["low", "medium", "high"]


def build_collections_list(settings: Settings) -> str:
    return "\n".join(
        f"- {name}: {collection.description or 'documents'}"
        for name, collection in settings.collections.items()
    )


def build_support_check(
    llm: LlmClient, prompts: Callable[[], Prompts], sources_block: str, answer_text: str
) -> Callable[[], Awaitable[str | None]]:
    """The check to run after the answer is shown: a badge line, or None."""

    async def check() -> str | None:
        messages = prompts().messages("support", sources=sources_block, answer=fence(answer_text))
        try:
            verdict, _ = await llm.for_task("support").complete_json(
                messages, SupportVerdict, "support"
            )
        except LlmError:
            return None
        return strings.SUPPORT_BADGES[verdict.risk]

    return check
