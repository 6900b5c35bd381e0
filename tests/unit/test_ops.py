"""Health decisions, metrics from answer traces, log lines that carry the answer id, and
/health of a bot whose Chroma hangs."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sys

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.logs import ANSWER_ID, setup_logging
from bot.runtime.ops import CHECK_TIMEOUT_SECONDS, OpsServer
from core.health import decide_health
from core.knowledge_base.base import KnowledgeBase
from core.metrics import Metrics
from core.requests import Answer
from core.trace import AnswerStep, PrestepStep, RetrieveStep, RightsStep
from tests.knowledge.conftest import knowledge_settings

HEALTH = {
    "all good": ({"sync": "ok", "chroma": "ok", "llm": "ok"}, 200),
    "no model configured is fine": ({"sync": "ok", "chroma": "ok", "llm": "not used"}, 200),
    "the model down": ({"sync": "ok", "chroma": "ok", "llm": "failing"}, 503),
    "sync stuck": ({"sync": "failing", "chroma": "not used", "llm": "not used"}, 503),
}


@pytest.mark.parametrize("checks,status", HEALTH.values(), ids=HEALTH.keys())
def test_decide_health(checks, status):
    code, body = decide_health(checks)
    assert code == status and body["checks"] == checks
    assert body["status"] == ("ok" if status == 200 else "failing")


async def test_metrics_come_from_answer_traces():
    metrics = Metrics()

    async def seven() -> int:
        return 7

    metrics.watch_queue(seven)
    answered = Answer(
        "27 days [1].",
        trace=(
            PrestepStep(0.3, verdict={}, prompt=[], tokens=120),
            RetrieveStep(0.02, "q", hits=("a", "b")),
            RightsStep(0.01, "everyone", denied=("b",), unchecked=False),
            AnswerStep(0.8, [{"role": "user", "content": "x" * 400}], "raw", "m", "v1"),
        ),
    )
    metrics.observe_answer(answered)
    metrics.observe_answer(Answer("no", kind="refusal", reason="toxic"))
    await metrics.refresh()
    text = metrics.exposition().decode()
    assert 'bot_answers_total{kind="answer"} 1.0' in text
    assert 'bot_refusals_total{reason="toxic"} 1.0' in text
    assert 'bot_llm_calls_total{purpose="prestep"} 1.0' in text
    assert 'bot_llm_prompt_tokens_total{purpose="prestep"} 120.0' in text
    assert 'bot_llm_prompt_tokens_total{purpose="answer"} 101.0' in text
    assert "bot_rights_denied_total 1.0" in text
    assert 'bot_step_seconds_count{step="answer"} 1.0' in text
    assert "bot_ingestion_queue_depth 7.0" in text


@pytest.fixture
def captured():
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    yield root
    root.handlers[:], level = saved
    root.setLevel(level)


def test_json_log_lines_carry_the_answer_id(captured):
    setup_logging("INFO", "json")
    stream = io.StringIO()
    captured.handlers[0].setStream(stream)
    token = ANSWER_ID.set("abc123")
    logging.getLogger("bot.test").info("answered in %d ms", 42)
    ANSWER_ID.reset(token)
    logging.getLogger("bot.test").info("no question")
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["message"] == "answered in 42 ms" and first["answer_id"] == "abc123"
    assert first["level"] == "INFO" and first["logger"] == "bot.test"
    assert "answer_id" not in second


def test_text_log_lines_carry_the_answer_id_too(captured):
    setup_logging("INFO", "text")
    stream = io.StringIO()
    captured.handlers[0].setStream(stream)
    token = ANSWER_ID.set("abc123")
    logging.getLogger("bot.test").info("answered")
    ANSWER_ID.reset(token)
    assert "[abc123]: answered" in stream.getvalue()


def threads_in_heartbeat() -> int:
    """Threads whose stack is inside a Chroma heartbeat now."""
    count = 0
    for frame in sys._current_frames().values():
        while frame is not None:
            if frame.f_code.co_name == "heartbeat":
                count += 1
                break
            frame = frame.f_back
    return count


async def test_a_hung_chroma_ties_up_one_thread_however_often_health_is_asked(tmp_path, embedders):
    connections: list[asyncio.StreamWriter] = []

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)  # accepted, never answered

    hung = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = hung.sockets[0].getsockname()[1]
    settings = knowledge_settings(tmp_path, chroma_url=f"http://127.0.0.1:{port}")
    kb = await KnowledgeBase.open(lambda: settings, embedders)
    ops = OpsServer(lambda: settings, Metrics(), lambda: "ok", kb)
    client = TestClient(TestServer(ops.build_app()))
    await client.start_server()
    try:
        for _ in range(2):
            async with asyncio.timeout(CHECK_TIMEOUT_SECONDS + 5):
                response = await client.get("/health")
            assert response.status == 503
            assert (await response.json())["checks"]["chroma"] == "failing"
        assert threads_in_heartbeat() == 1, "one probe waits for Chroma, not one per request"
    finally:
        await client.close()
        hung.close()
        for writer in connections:
            writer.close()
        await kb.close()
