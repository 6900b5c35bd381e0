"""A real Synapse for the session, real users, and the bot running in this process."""

from __future__ import annotations

import asyncio
import io
import os
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.dev.synapse import Homeserver, ensure_synapse_venv, start_homeserver
from bot.runtime.app import BotApp
from tests.e2e.people import Person
from tests.rights.conftest import SourceApp, serve

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery staple"
# A stop waits for the answers in flight (the shutdown grace) and closes its stores.
STOP_SECONDS = 120


@pytest.fixture(scope="session")
def homeserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Homeserver]:
    python = ensure_synapse_venv(Path(os.environ.get("SYNAPSE_VENV", ROOT / ".venv-synapse")))
    server = start_homeserver(tmp_path_factory.mktemp("synapse"), python)
    yield server
    server.stop()


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def people(homeserver: Homeserver, tmp_path: Path) -> AsyncIterator:
    created: list[Person] = []

    async def make(name: str) -> Person:
        localpart = unique(name)
        user_id = homeserver.register(localpart, PASSWORD)
        person = await Person.login(homeserver.url, user_id, PASSWORD, tmp_path / localpart)
        created.append(person)
        return person

    yield make
    for person in created:
        await person.close()


class BotHarness:
    """The bot's account, config file and data folder; start and stop it like an admin."""

    def __init__(
        self,
        homeserver: Homeserver,
        folder: Path,
        storage_toml: str = "",
        user_id: str | None = None,
    ) -> None:
        self.homeserver = homeserver
        self.folder = folder
        self.storage_toml = storage_toml
        self.user_id = user_id or homeserver.register(unique("bot"), PASSWORD)
        # How the bot logs in: its password by default (a test may give a token file).
        self.credential = 'password_env = "BOT_PASSWORD"'

        self.config_path = folder / "config.toml"
        self.env = {"BOT_PASSWORD": PASSWORD}
        self.app: BotApp | None = None
        self._task: asyncio.Task | None = None
        # The bot's clock (who may read what since when) shows at least this epoch time:
        # a test moves it on instead of waiting for a room's retention to pass.
        self.clock_at_least = 0.0

    def write_config(
        self,
        extra: str = "",
        *,
        allowed_users: list[str] = (),
        ops_port: int | None = None,
        **bot: object,
    ) -> None:
        """The bot's config; /health and /metrics only when a test asks (bots that run
        one after another would share the port otherwise); no placeholder unless asked."""
        ops = f"[ops]\nport = {ops_port}\n" if ops_port else "[ops]\nenabled = false\n"
        # Tests read the first reply to a question as its answer: on a loaded machine an
        # answer may take over the default 3 s, and the placeholder would be that reply.
        # A test about the placeholder sets it.
        bot.setdefault("placeholder_after_seconds", 600)
        bot_lines = "\n".join(f"{key} = {_toml(value)}" for key, value in bot.items())
        self.config_path.write_text(
            f"""
[matrix]
homeserver = "{self.homeserver.url}"
user_id = "{self.user_id}"
{self.credential}
display_name = "Knowledge Bot"

[bot]
data_dir = "data"
{bot_lines}

[invites]
allowed_users = {_toml(list(allowed_users))}
{extra}
{ops}
{self.storage_toml}
"""
        )

    async def start(self, answerer=None) -> BotApp:
        self.app = BotApp(
            self.config_path,
            self.env,
            answerer=answerer,
            clock=lambda: max(time.time(), self.clock_at_least),
        )
        self._task = asyncio.create_task(self.app.run())
        ready = asyncio.create_task(self.app.ready.wait())
        done, _ = await asyncio.wait({ready, self._task}, timeout=30, return_when="FIRST_COMPLETED")
        if self._task in done:
            ready.cancel()
            await self._task
        assert ready in done, "the bot did not become ready"
        return self.app

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            done, _ = await asyncio.wait({self._task}, timeout=STOP_SECONDS)
            if not done:
                pytest.fail(f"the bot did not stop in {STOP_SECONDS} s:\n{_task_stacks()}")
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None


def _task_stacks() -> str:
    """Where every task of the loop waits (what a hung stop waits for)."""
    out = io.StringIO()
    for task in asyncio.all_tasks():
        task.print_stack(file=out)
    return out.getvalue()


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return str(value)


@pytest.fixture
async def bot(
    homeserver: Homeserver, tmp_path: Path, storage_toml: str
) -> AsyncIterator[BotHarness]:
    harness = BotHarness(homeserver, tmp_path / "bot", storage_toml)
    harness.folder.mkdir()
    yield harness
    await harness.stop()


@pytest.fixture
async def wiki() -> AsyncIterator[SourceApp]:
    """The `wiki` source application: it verifies the bot's reader tokens (set its
    `jwks_url` and `acl`)."""
    app = SourceApp("wiki", "")
    server = await serve(app)
    app.url = str(server.make_url("/rights"))
    yield app
    await server.close()
