"""A homeserver outage: /health says so within seconds, and the first question after the
homeserver is back is answered within seconds (not after nio's minute-long backoff).

The test runs a Synapse of its own, stopped for 30 s and started again on the same port
and data, so the session's homeserver stays up for the other tests.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import aiohttp
import pytest

from bot.dev.synapse import ensure_synapse_venv, free_port, start_homeserver
from tests.e2e.conftest import PASSWORD, ROOT, BotHarness, unique
from tests.e2e.people import Person, replies_to
from tests.e2e.test_conversation import room_with_bot

pytestmark = pytest.mark.e2e

OUTAGE_SECONDS = 30
RECOVERY_SECONDS = 10


async def health(port: int) -> dict:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{port}/health") as response:
            return await response.json()


async def test_after_a_homeserver_outage_the_first_question_is_answered_within_seconds(
    tmp_path: Path, storage_toml: str
):
    python = ensure_synapse_venv(Path(os.environ.get("SYNAPSE_VENV", ROOT / ".venv-synapse")))
    homeserver = start_homeserver(tmp_path / "synapse", python)
    port = int(homeserver.url.rsplit(":", 1)[1])
    alice = await Person.login(
        homeserver.url, homeserver.register(unique("alice"), PASSWORD), PASSWORD, tmp_path / "a"
    )
    bot = BotHarness(homeserver, tmp_path / "bot", storage_toml)
    bot.folder.mkdir()
    ops_port = free_port()
    bot.write_config(allowed_users=[alice.user_id], ops_port=ops_port)
    try:
        await bot.start()
        room = await room_with_bot(alice, bot)
        question = await alice.say(room, "are you there?", mentions=[bot.user_id])
        await alice.wait_for(room, replies_to(question), timeout=30)
        assert (await health(ops_port))["checks"]["sync"] == "ok"

        homeserver.stop()
        stopped = time.monotonic()
        deadline = stopped + RECOVERY_SECONDS
        while (await health(ops_port))["checks"]["sync"] != "failing":
            assert time.monotonic() < deadline, "/health did not show the outage"
            await asyncio.sleep(0.5)
        await asyncio.sleep(OUTAGE_SECONDS - (time.monotonic() - stopped))

        homeserver = start_homeserver(tmp_path / "synapse", python, port)
        back = time.monotonic()
        question = await alice.say(room, "and now?", mentions=[bot.user_id])
        await alice.wait_for(room, replies_to(question), timeout=60)
        assert time.monotonic() - back < RECOVERY_SECONDS
        assert (await health(ops_port))["checks"]["sync"] == "ok"
    finally:
        await bot.stop()
        await alice.close()
        homeserver.stop()
