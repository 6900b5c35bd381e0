"""The compose stack brought up as an admin does, with what runs here: `setup.sh`
(through podman-compose in Docker Compose's place), then `up -d` of compose.yaml with
tests/deploy/stack/local.yaml (Synapse from PyPI and the scripted model in local images
instead of pulled ones and vLLM), a person on the stack's Synapse asks the bot, and gets
a cited answer from a document put through the published ingestion API.

Run by tests/deploy/run-container-tests.sh (KNOWLEDGE_BOT_IMAGE set); skipped otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
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

from bot.dev.synapse import free_port
from tests.deploy.test_container import ENGINE, IMAGE
from tests.e2e.people import Person
from tests.e2e.scripted import ask
from tests.e2e.test_conversation import room_with_bot

ROOT = Path(__file__).resolve().parents[2]
PODMAN_COMPOSE = ROOT / ".venv-deploy" / "bin" / "podman-compose"
IMAGES = Path(__file__).parent / "images"
SERVER_NAME = "example.org"
PASSWORD = "stack test password"
START_SECONDS = 300

pytestmark = pytest.mark.skipif(
    not IMAGE, reason="needs a built image: tests/deploy/run-container-tests.sh"
)

# `docker compose …` as setup.sh runs it, done by podman-compose on this project.
COMPOSE_AS_DOCKER = """#!/bin/sh
[ "$1" = compose ] && shift
exec "{podman_compose}" --podman-path "{podman}" -p "{project}" {files} "$@"
"""
SINGLE = ("compose.yaml", "local.yaml")
SCALED = ("compose.yaml", "local.yaml", "scale.yaml", "scale-local.yaml")
# What scale.yaml's comment tells the admin to add to config/config.toml.
SCALED_CONFIG = """
[storage]
url = "postgresql://bot@postgres/bot"
password_env = "POSTGRES_PASSWORD"
"""


@dataclass
class Stack:
    folder: Path
    docker: Path
    ports: dict[str, int]
    project: str

    def engine(self, *args: str) -> None:
        subprocess.run([ENGINE, *args], check=True, capture_output=True, timeout=120)

    def compose(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [str(self.docker), "compose", *args],
            cwd=self.folder,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if check:
            assert done.returncode == 0, f"compose {' '.join(args)}:\n{done.stderr[-3000:]}"
        return done


def build_stack_images() -> None:
    """Synapse's, PostgreSQL's and nginx's images, built once (cached after that)."""
    for name in ("synapse", "postgres", "nginx"):
        args = [
            ENGINE,
            "build",
            "--network=host",
            "--format",
            "docker",
            "-t",
            f"localhost/stack-{name}:test",
            "-f",
            str(IMAGES / f"{name}.Containerfile"),
        ]
        if os.environ.get("CA_BUNDLE"):
            args += ["--secret", f"id=ca_bundle,src={os.environ['CA_BUNDLE']}"]
        if os.environ.get("BASE"):
            args += ["--build-arg", f"BASE={os.environ['BASE']}"]
        done = subprocess.run([*args, str(IMAGES)], capture_output=True, text=True, timeout=1200)
        assert done.returncode == 0, done.stderr[-3000:]


async def wait_for(url: str, stack: Stack) -> None:
    deadline = time.monotonic() + START_SECONDS
    async with aiohttp.ClientSession() as http:
        while True:
            try:
                async with http.get(url) as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            if time.monotonic() > deadline:
                logs = stack.compose("logs", "bot", check=False)
                pytest.fail(f"{url} did not answer:\n{logs.stdout[-4000:]}{logs.stderr[-2000:]}")
            await asyncio.sleep(2)


@contextlib.asynccontextmanager
async def brought_up(tmp_path: Path, files: tuple[str, ...]) -> AsyncIterator[Stack]:
    """The stack as an admin brings it up: .env filled in, setup.sh, `up -d`."""
    assert PODMAN_COMPOSE.exists(), "run deploy/setup-deploy-tools.sh"
    await asyncio.to_thread(build_stack_images)
    folder = tmp_path / "compose"
    shutil.copytree(ROOT / "deploy" / "compose", folder)
    for name in files:
        if not (folder / name).exists():
            shutil.copy(Path(__file__).parent / "stack" / name, folder / name)
    if "scale.yaml" in files:
        with (folder / "config" / "config.toml").open("a") as config:
            config.write(SCALED_CONFIG)
        text = (folder / "config" / "config.toml").read_text()
        (folder / "config" / "config.toml").write_text(
            text.replace('url = "http://vllm:8000/v1"', 'url = "http://llm:8000/v1"')
        )
    ports = {"SYNAPSE_PORT": free_port(), "INGEST_PORT": free_port(), "OPS_PORT": free_port()}
    env = (folder / "env.example").read_text()
    for key, value in {
        "SERVER_NAME": SERVER_NAME,
        "BOT_PASSWORD": PASSWORD,
        "BOT_PICKLE_KEY": uuid.uuid4().hex * 2,
        "WIKI_TOKEN": "wiki-token",
        "POSTGRES_PASSWORD": uuid.uuid4().hex,
        **{k: str(v) for k, v in ports.items()},
    }.items():
        env = "\n".join(
            f"{key}={value}" if line.startswith(f"{key}=") else line for line in env.splitlines()
        )
    env += f"\nBOT_IMAGE={IMAGE}\nREPO={ROOT}\n"
    (folder / ".env").write_text(env + "\n")
    docker = tmp_path / "docker"
    project = f"kbstack{uuid.uuid4().hex[:6]}"
    docker.write_text(
        COMPOSE_AS_DOCKER.format(
            podman_compose=PODMAN_COMPOSE,
            podman=shutil.which(ENGINE),
            project=project,
            files=" ".join(f"-f {name}" for name in files),
        )
    )
    docker.chmod(0o755)
    found = Stack(folder, docker, ports, project)
    try:
        setup = await asyncio.to_thread(
            subprocess.run,
            ["./setup.sh"],
            cwd=folder,
            capture_output=True,
            text=True,
            env={**os.environ, "DOCKER": str(docker)},
            timeout=600,
        )
        assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
        await asyncio.to_thread(found.compose, "up", "-d", "--no-build")
        await wait_for(f"http://127.0.0.1:{ports['OPS_PORT']}/health", found)
        # The ingestion API starts once the knowledge base is open, after /health.
        await wait_for(f"http://127.0.0.1:{ports['INGEST_PORT']}/api/v1/openapi.json", found)
        yield found
    finally:
        if not os.environ.get("KEEP_STACK"):  # kept, to look into a failure
            await asyncio.to_thread(found.compose, "down", "--volumes", check=False)


BOT = type("Bot", (), {"user_id": f"@knowledge-bot:{SERVER_NAME}"})


@contextlib.asynccontextmanager
async def alice_in_a_room(stack: Stack, tmp_path: Path) -> AsyncIterator[tuple[Person, str]]:
    """A person of the stack's Synapse (registered as docs/getting-started/compose.md tells an admin to) in a
    room with the bot, once the travel policy is put through the ingestion API."""
    await asyncio.to_thread(
        stack.compose,
        "exec",
        "-T",
        "synapse",
        "register_new_matrix_user",
        "-c",
        "/data/homeserver.yaml",
        "-u",
        "alice",
        "-p",
        PASSWORD,
        "--no-admin",
        "http://localhost:8008",
    )
    homeserver = f"http://127.0.0.1:{stack.ports['SYNAPSE_PORT']}"
    alice = await Person.login(homeserver, f"@alice:{SERVER_NAME}", PASSWORD, tmp_path / "alice")
    try:
        url = (
            f"http://127.0.0.1:{stack.ports['INGEST_PORT']}/api/v1/collections/handbook/"
            "documents/travel?wait=true"
        )
        document = {
            "title": "Travel policy",
            "url": "https://wiki.example.org/travel",
            "content": "# Travel\n\nTrain travel is booked through the travel desk.",
        }
        headers = {"Authorization": "Bearer wiki-token"}
        async with (
            aiohttp.ClientSession() as http,
            http.put(url, json=document, headers=headers) as response,
        ):
            assert response.status == 200, await response.text()
        yield alice, await room_with_bot(alice, BOT)
    finally:
        await alice.close()


async def test_a_question_is_answered_through_the_stack(tmp_path: Path):
    async with (
        brought_up(tmp_path, SINGLE) as stack,
        alice_in_a_room(stack, tmp_path) as (alice, room),
    ):
        reply = await ask(alice, room, "how is train travel booked?", BOT, timeout=120)
        assert "travel desk" in reply["body"] and "[1]" in reply["body"]


async def test_the_standby_takes_over_when_the_active_bot_is_killed(tmp_path: Path):
    async with (
        brought_up(tmp_path, SCALED) as stack,
        alice_in_a_room(stack, tmp_path) as (alice, room),
    ):
        reply = await ask(alice, room, "how is train travel booked?", BOT, timeout=120)
        assert "travel desk" in reply["body"]
        await asyncio.to_thread(stack.engine, "kill", f"{stack.project}_bot_1")
        # The standby takes the lease once it runs out ([bot] lease_seconds, 15 s).
        again = await ask(alice, room, "how is train travel booked, again?", BOT, timeout=180)
        assert "travel desk" in again["body"]
