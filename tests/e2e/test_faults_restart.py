"""A bot killed or stopped mid-answer answers in the same message once it is back.

The bot runs as its own process (`python -m bot`), as an admin runs it, so that SIGKILL
is real: no shutdown code runs, and the thread is left with the placeholder and part of
the answer. The scripted model (tests/support/fake_llm.py) runs in this process on
loopback, and holds its first streamed answer until the test lets it go.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.dev.synapse import free_port
from bot.inbox.render import ANSWER_ID_KEY
from bot.inbox.reply import STREAMING_MARK
from bot.inbox.state import SqlStateStore
from core import strings
from core.config import load_config
from core.storage.opening import Storage
from tests.e2e.conftest import ROOT, BotHarness
from tests.e2e.people import Person, membership_of, replies_to, settle
from tests.e2e.scripted import llm_config, reading_model
from tests.e2e.test_knowledge import knowledge_config, put
from tests.e2e.test_pipeline import edits_of
from tests.support.fake_llm import FakeLlm

pytestmark = pytest.mark.e2e

# What the reading model quotes from the travel page.
ANSWER = "Trains are booked through Travelink two weeks ahead."
# A separate process imports torch and loads the models before it syncs.
START_SECONDS = 120


class BotProcess:
    """`python -m bot --config …` for the harness's config (or `config`) and data folder."""

    def __init__(self, harness: BotHarness, log: Path, config: Path | None = None) -> None:
        self.log = log.open("a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot", "--config", str(config or harness.config_path)],
            cwd=ROOT,
            env={**os.environ, **harness.env},
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def stop(self, sig: signal.Signals) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        returncode = self.process.wait(timeout=60)
        self.log.close()
        return returncode


@pytest.fixture
async def processes(bot: BotHarness, tmp_path: Path) -> AsyncIterator[Callable[[], BotProcess]]:
    """Starts bot processes; the ones a test leaves running are killed. Their log is
    printed (pytest shows it when the test fails)."""
    started: list[BotProcess] = []
    log = tmp_path / "bot.log"

    def start() -> BotProcess:
        started.append(BotProcess(bot, log))
        return started[-1]

    yield start
    for process in started:
        process.stop(signal.SIGKILL)
    print(log.read_text() if log.exists() else "no bot log")


async def put_document(port: int) -> None:
    """The handbook's travel page, once the bot process serves its ingestion API."""
    document = {
        "title": "Travel policy",
        "url": "https://wiki/travel",
        "content": "Trains are booked through Travelink two weeks ahead.",
    }
    for _ in range(START_SECONDS * 2):
        try:
            await put(port, "handbook", "travel", document)
            return
        except aiohttp.ClientConnectorError:
            await asyncio.sleep(0.5)
    raise AssertionError("the ingestion API did not come up")


async def alice_asks_the_bot_process(
    people, bot: BotHarness, llm: FakeLlm, processes: Callable[[], BotProcess]
) -> tuple[Person, str, str, BotProcess, asyncio.Event]:
    """Alice asks a bot process whose model holds the answer after its first words:
    (alice, room, question, process, the event that lets the model go on)."""
    alice = await people("alice")
    port = free_port()
    bot.write_config(
        knowledge_config(port) + llm_config(llm) + "stream_edit_seconds = 0.2\n",
        allowed_users=[alice.user_id],
        placeholder_after_seconds=0,
        shutdown_grace_seconds=0,
    )
    llm.respond = reading_model
    process = processes()
    room = await alice.create_room([bot.user_id])
    joined = membership_of(bot.user_id, "join")
    # Not a full START_SECONDS for a process that stopped at once (a config it refused).
    await alice.wait_until(
        lambda: bool(alice.seen(room, joined)) or process.process.poll() is not None,
        timeout=START_SECONDS,
    )
    assert process.process.poll() is None, "the bot process stopped; its log is below"
    await put_document(port)
    held = llm.held = asyncio.Event()
    llm.hold_after = 2
    question = await alice.say(room, "how are trains booked?", mentions=[bot.user_id])
    return alice, room, question, process, held


def shown(event: dict[str, Any]) -> dict[str, Any]:
    """What a client shows for a message or an edit."""
    content = event["content"]
    return content.get("m.new_content", content)


def body(event: dict[str, Any]) -> str:
    return shown(event)["body"]


def is_answer(event: dict[str, Any]) -> bool:
    """A finished answer, in a message or an edit (only those carry the answer id)."""
    return event.get("type") == "m.room.message" and ANSWER_ID_KEY in shown(event)


def answered(event_id: str) -> Callable[[dict[str, Any]], bool]:
    """An edit of `event_id` into a finished answer."""
    return lambda e: edits_of(event_id)(e) and is_answer(e)


def streaming_requests(llm: FakeLlm) -> int:
    return sum(1 for request in llm.history if request.get("stream"))


async def assert_answered_once_in(alice: Person, room: str, question: str, reply: str) -> None:
    """The reply message itself turns into the answer; nothing else answers the question."""
    final = await alice.wait_for(room, is_answer, timeout=START_SECONDS)
    assert edits_of(reply)(final), "the answer went into a new message, not the earlier reply"
    assert ANSWER in body(final) and not body(final).endswith(STREAMING_MARK)
    await settle(alice, room)  # a second answer, were one coming, would show by then
    assert [e["event_id"] for e in alice.seen(room, replies_to(question))] == [reply]
    assert len(alice.seen(room, is_answer)) == 1


async def pending_after_stop(bot: BotHarness) -> list:
    settings = load_config(bot.config_path, bot.env)
    storage = Storage(settings.storage, settings.bot.data_dir)
    try:
        state = await SqlStateStore.open(await storage.database("state"))
        return await state.pending_events()
    finally:
        await storage.close()


async def test_a_killed_bot_edits_its_placeholder_into_the_answer_once_back(
    people, bot, llm, processes
):
    alice, room, question, first, held = await alice_asks_the_bot_process(
        people, bot, llm, processes
    )
    placeholder = await alice.wait_for(room, replies_to(question), timeout=60)
    assert body(placeholder) == strings.PLACEHOLDER
    partial = await alice.wait_for(room, edits_of(placeholder["event_id"]), timeout=60)
    assert body(partial).endswith(STREAMING_MARK), "the model is mid-answer"

    assert first.stop(signal.SIGKILL) == -signal.SIGKILL
    held.set()  # the dead process's request may end now
    asked_before = streaming_requests(llm)

    second = processes()
    await assert_answered_once_in(alice, room, question, placeholder["event_id"])
    assert streaming_requests(llm) == asked_before + 1, "answered once after the restart"
    assert second.stop(signal.SIGTERM) == 0
    assert await pending_after_stop(bot) == []


async def test_a_bot_stopped_mid_answer_edits_its_restart_notice_into_the_answer(
    people, bot, llm, processes
):
    alice, room, question, first, held = await alice_asks_the_bot_process(
        people, bot, llm, processes
    )
    placeholder = await alice.wait_for(room, replies_to(question), timeout=60)
    await alice.wait_for(room, edits_of(placeholder["event_id"]), timeout=60)

    assert first.stop(signal.SIGTERM) == 0
    held.set()
    notice = await alice.wait_for(
        room, lambda e: edits_of(placeholder["event_id"])(e) and body(e) == strings.INTERRUPTED
    )
    assert notice["sender"] == bot.user_id

    second = processes()
    await assert_answered_once_in(alice, room, question, placeholder["event_id"])
    assert second.stop(signal.SIGTERM) == 0
    assert await pending_after_stop(bot) == []


async def test_a_reply_redacted_while_the_bot_was_down_gives_way_to_a_new_one(people, bot, llm):
    alice = await people("alice")
    port = free_port()
    bot.write_config(
        knowledge_config(port) + llm_config(llm),
        allowed_users=[alice.user_id],
        placeholder_after_seconds=0,
        shutdown_grace_seconds=0,
    )
    llm.respond = reading_model
    await bot.start()
    room = await alice.create_room([bot.user_id])
    await alice.wait_for(room, membership_of(bot.user_id, "join"))
    await put_document(port)
    held = llm.held = asyncio.Event()
    question = await alice.say(room, "how are trains booked?", mentions=[bot.user_id])
    placeholder = await alice.wait_for(room, replies_to(question), timeout=60)
    await bot.stop()  # in this process: the same shutdown as on SIGTERM
    held.set()
    await alice.wait_for(room, lambda e: strings.INTERRUPTED in str(e["content"]))
    await alice.redact(room, placeholder["event_id"])

    await bot.start()
    fresh = await alice.wait_for(
        room,
        lambda e: replies_to(question)(e) and e["event_id"] != placeholder["event_id"],
        timeout=60,
    )
    assert body(fresh) == strings.PLACEHOLDER, "a new placeholder (it shows at once)"
    final = await alice.wait_for(room, answered(fresh["event_id"]), timeout=60)
    assert ANSWER in body(final)
    assert len(alice.seen(room, edits_of(placeholder["event_id"]))) == 1, (
        "nothing but the restart notice went into the redacted message"
    )
