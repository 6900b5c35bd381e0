"""Background loops that fail are started again, and named while they are failing."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from aiohttp import ClientSession
from aiohttp.test_utils import TestServer

from bot.runtime.ops import OpsServer
from bot.runtime.supervise import Supervisor
from core.config import parse_config
from core.metrics import Metrics


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
        origin="test", env={}, base_dir=Path("."),
    )  # fmt: skip
    failing: list[str] = ["history flusher"]
    ops = OpsServer(lambda: settings, Metrics(), lambda: "ok", None, lambda: failing)
    async with TestServer(ops.build_app()) as server, ClientSession() as http:
        async with http.get(server.make_url("/health")) as response:
            assert response.status == 503
            assert (await response.json())["checks"]["loop: history flusher"] == "failing"
        failing.clear()
        async with http.get(server.make_url("/health")) as response:
            assert response.status == 200
