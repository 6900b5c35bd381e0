"""The pipeline against the scripted OpenAI-compatible server and token-checking applications."""

from __future__ import annotations

import pytest

from core.config.llm import LlmSettings
from core.knowledge.documents import Document
from core.llm.client import LlmClient
from core.llm.prompts import load_prompts
from core.pipeline.answer import AnswerPipeline
from tests.rights.conftest import cache_seconds, world  # noqa: F401  (fixtures)
from tests.support.reading import question_in, verdict  # noqa: F401  (used by tests)

DOCUMENTS = [
    Document(
        "handbook",
        "travel",
        "Travel policy",
        "Trains are booked through Travelink two weeks ahead.",
        url="https://wiki/travel",
    ),
    Document(
        "handbook",
        "leave",
        "Annual leave",
        "Full-time staff have 27 days of annual leave per year.",
        url="https://wiki/leave",
    ),
    Document(
        "wiki",
        "salaries",
        "Salary bands",
        "Travel managers are in salary band E4.",
        url="https://wiki/secret",
    ),
]


@pytest.fixture
async def pipeline(world, llm):  # noqa: F811
    await world.kb.indexer.put_many(DOCUMENTS)
    world.wiki.acl = {"alice": {("wiki", "salaries")}}
    settings = world.kb.indexer.settings
    client = LlmClient(
        LlmSettings(
            url=llm.url,
            model="test-model",
            max_retries=0,
            timeout_seconds=3,
            reasoning_opens_in_prompt=False,
        )
    )
    yield AnswerPipeline(client, world.kb.retriever, world.kb.rights, settings, load_prompts)
    await client.close()
