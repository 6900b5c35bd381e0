"""Background loops that fail are started again, and named while they are failing."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from aiohttp import ClientSession
from aiohttp.test_utils import TestServer

from bot.runtime.ops import OpsServer
from core.config import parse_config
from core.metrics import Metrics
from core.supervise import ServiceUnavailable, Supervisor


async def test_a_failing_loop_is_started_again_and_named_until_it_recovers(caplog):
    supervisor = Supervisor(retry_seconds=(0.01, 0.02))
    runs: list[int] = []
    healthy = asyncio.Event()

    async def flaky() -> None:
        runs.append(len(runs))
        if len(runs) < 3:
            raise ConnectionError("Chroma is down")
        healthy.set()
        await asyncio.sleep(3600)

    task = asyncio.create_task(supervisor.keep_running("history flusher", flaky))
    await asyncio.wait_for(healthy.wait(), timeout=5)
    assert len(runs) == 3
    assert supervisor.failing() == ["history flusher"]
    assert supervisor.loops["history flusher"].failures_in_a_row == 2
    failures = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(failures) == 2 and "reference" in failures[0].getMessage()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled(), "cancelling the bot still stops its loops"


async def test_a_loop_that_ends_is_not_started_again():
    supervisor = Supervisor(retry_seconds=(0.01,))
    runs: list[int] = []

    async def once() -> None:
        runs.append(1)

    await asyncio.wait_for(supervisor.keep_running("model warm-up", once), timeout=5)
    assert runs == [1] and supervisor.failing() == []


async def test_health_names_a_failing_loop_over_http():
    settings = parse_config(
        '[matrix]\nhomeserver = "http://127.0.0.1:1"\nuser_id = "@bot:x"\npassword = "p"\n',
        origin="test",
        env={},
        base_dir=Path("."),
    )
    failing = {"history flusher": "ConnectionError (reference 1a2b3c4d in the log)"}
    ops = OpsServer(lambda: settings, Metrics(), lambda: "ok", None, lambda: failing)
    async with TestServer(ops.build_app()) as server, ClientSession() as http:
        async with http.get(server.make_url("/health")) as response:
            assert response.status == 503
            body = await response.json()
            assert body["checks"]["loop: history flusher"] == "failing"
            assert "reference 1a2b3c4d" in body["problems"]["loop: history flusher"]
        failing.clear()
        async with http.get(server.make_url("/health")) as response:
            assert response.status == 200


async def test_a_service_that_cannot_start_is_reported_once_with_its_reason():
    """A port that stays taken is told once per outage, in its own words, and named with
    them while it fails; another error is told by its kind and reference only."""
    reports: list[tuple[str, str]] = []
    second = asyncio.Event()

    async def report(name: str, reason: str) -> None:
        reports.append((name, reason))
        if len(reports) == 2:
            second.set()

    supervisor = Supervisor(retry_seconds=(0.001,), on_failure=report)
    runs: list[int] = []
    started = asyncio.Event()

    async def chat_api() -> None:
        runs.append(1)
        if len(runs) < 5:
            raise ServiceUnavailable("the chat API cannot listen on 127.0.0.1:8089 (in use)")
        started.set()
        await asyncio.sleep(3600)

    task = asyncio.create_task(supervisor.keep_running("chat API", chat_api))
    await asyncio.wait_for(started.wait(), timeout=5)
    assert reports == [("chat API", "the chat API cannot listen on 127.0.0.1:8089 (in use)")]
    assert supervisor.reasons() == {"chat API": reports[0][1]}

    async def broken() -> None:
        raise ValueError("a secret from a message")

    other = asyncio.create_task(supervisor.keep_running("history flusher", broken))
    await asyncio.wait_for(second.wait(), timeout=5)
    assert reports[1][0] == "history flusher"
    assert "ValueError" in reports[1][1] and "secret" not in reports[1][1]
    for running in (task, other):
        running.cancel()
    await asyncio.gather(task, other, return_exceptions=True)
