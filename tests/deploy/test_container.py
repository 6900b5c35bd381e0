"""The bot's image as an admin runs it: the container answers a person's question on a
real Synapse, reports its health, runs as a non-root user on a read-only root
filesystem (it writes only to the mounted data folder), and stops on SIGTERM within its
grace period.

Needs a container engine and a built image, so it is not part of the README's test
command (the image builds in about ten minutes): `tests/deploy/run-container-tests.sh`
builds the image (cached after the first build) and runs these tests with
KNOWLEDGE_BOT_IMAGE set to it. Without that variable they are skipped.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from bot.dev.synapse import SERVER_NAME, free_port
from tests.e2e.conftest import PASSWORD, unique
from tests.e2e.scripted import ask, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put

IMAGE = os.environ.get("KNOWLEDGE_BOT_IMAGE", "")
ENGINE = os.environ.get("CONTAINER_ENGINE") or shutil.which("podman") or "docker"
GRACE_SECONDS = 30
START_SECONDS = 180

pytestmark = pytest.mark.skipif(
    not IMAGE, reason="needs a built image: tests/deploy/run-container-tests.sh"
)


def engine(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([ENGINE, *args], capture_output=True, text=True, timeout=120)
    if check:
        assert done.returncode == 0, f"{ENGINE} {' '.join(args)}:\n{done.stderr}"
    return done


async def in_thread(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """The engine's answer, while this test's loop goes on serving the scripted model
    (the bot's /health asks it)."""
    return await asyncio.to_thread(engine, *args, check=check)


@dataclass
class Container:
    name: str
    user_id: str
    data: Path
    ingest_port: int
    ops_port: int

    def logs(self) -> str:
        done = engine("logs", self.name, check=False)
        return done.stdout + done.stderr


async def wait_healthy(container: Container) -> None:
    deadline = time.monotonic() + START_SECONDS
    async with aiohttp.ClientSession() as http:
        while True:
            state = await in_thread("inspect", container.name, "--format", "{{.State.Running}}")
            assert state.stdout.strip() == "true", f"the container stopped:\n{container.logs()}"
            try:
                async with http.get(f"http://127.0.0.1:{container.ops_port}/health") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            assert time.monotonic() < deadline, f"not healthy in time:\n{container.logs()}"
            await asyncio.sleep(1)


@pytest.fixture
async def container(homeserver, people, llm, tmp_path: Path) -> AsyncIterator[Container]:
    """The image on the host network, its config folder mounted read-only and its data
    folder read-write, as docs/getting-started/containers.md says."""
    user_id = homeserver.register(unique("bot"), PASSWORD)
    config, data = tmp_path / "config", tmp_path / "data"
    config.mkdir()
    data.mkdir()
    os.chown(data, 10001, 10001)  # the image's user
    llm.respond = reading_model
    ingest_port, ops_port = free_port(), free_port()
    (config / "config.toml").write_text(
        f'[matrix]\nhomeserver = "{homeserver.url}"\nuser_id = "{user_id}"\n'
        'password_env = "BOT_PASSWORD"\ndisplay_name = "Knowledge Bot"\n'
        '[bot]\ndata_dir = "/data"\n'
        f'[ops]\nhost = "127.0.0.1"\nport = {ops_port}\n'
        f'[llm]\nurl = "{llm.url}"\nmodel = "test-model"\nmax_retries = 0\n'
        "reasoning_opens_in_prompt = false\n[pipeline]\nsupport_check = false\n"
        + f'[invites]\nallowed_servers = ["{SERVER_NAME}"]\n'
        + knowledge_config(ingest_port)
    )
    name = f"knowledge-bot-test-{uuid.uuid4().hex[:8]}"
    engine(
        "run",
        "--detach",
        "--name",
        name,
        "--network=host",
        "--read-only",
        "--volume",
        f"{config}:/config:ro",
        "--volume",
        f"{data}:/data",
        "--env",
        f"BOT_PASSWORD={PASSWORD}",
        "--stop-timeout",
        str(GRACE_SECONDS),
        IMAGE,
    )
    found = Container(name, user_id, data, ingest_port, ops_port)
    try:
        await wait_healthy(found)
        yield found
    finally:
        engine("rm", "--force", name, check=False)


async def test_a_question_is_answered_by_the_container(container, people, llm):
    alice = await people("alice")
    await put(
        container.ingest_port,
        "handbook",
        "travel",
        {
            "title": "Travel policy",
            "url": "https://wiki.example.org/travel",
            "content": "# Travel\n\nTrain travel is booked through the travel desk.",
        },
    )
    bot = type("Bot", (), {"user_id": container.user_id})
    room = await room_with_bot(alice, bot)
    reply = await ask(alice, room, "how is train travel booked?", bot, timeout=120)
    assert "travel desk" in reply["body"] and "[1]" in reply["body"]
    assert "https://wiki.example.org/travel" in reply["body"]


async def test_the_container_is_healthy_non_root_and_writes_only_its_data_folder(container):
    # The image's HEALTHCHECK, which finds /health where the config's [ops] puts it.
    health = await in_thread("healthcheck", "run", container.name, check=False)
    assert health.returncode == 0, f"HEALTHCHECK: {health.stdout}{health.stderr}"
    assert (await in_thread("exec", container.name, "id", "-u")).stdout.strip() == "10001"
    # Run with --read-only: the bot worked, so its every write went to /data (its stores
    # are there), and nothing else can be written.
    assert (container.data / "state.sqlite3").exists(), sorted(container.data.iterdir())
    home = await in_thread("exec", container.name, "touch", "/home/bot/x", check=False)
    assert home.returncode != 0 and "Read-only file system" in home.stderr
    assert (await in_thread("exec", container.name, "touch", "/data/x")).returncode == 0


async def test_sigterm_stops_the_container_within_its_grace_period(container):
    started = time.monotonic()
    await in_thread("stop", "--time", str(GRACE_SECONDS), container.name)
    seconds = time.monotonic() - started
    state = json.loads((await in_thread("inspect", container.name)).stdout)[0]["State"]
    assert seconds < GRACE_SECONDS, f"stopped only after {seconds:.1f} s (killed)"
    assert state["ExitCode"] == 0, container.logs()
