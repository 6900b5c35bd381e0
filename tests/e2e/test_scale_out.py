"""Several processes, one bot: bot processes and `knowledge-api` workers on one PostgreSQL
and one `chroma run` server, each a real process (SIGKILL is a real crash).

The two bot processes share the data folder (the Matrix login and encryption keys) and
the database; each has a config of its own only for its ingestion API's port.
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest

from bot.dev.synapse import free_port
from core import strings
from core.ids import localpart_of
from tests.e2e.conftest import ROOT, BotHarness
from tests.e2e.people import membership_of, replies_to, settle
from tests.e2e.scripted import llm_config, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_faults_restart import (
    START_SECONDS,
    BotProcess,
    answered,
    assert_answered_once_in,
    body,
    pending_after_stop,
    put_document,
    streaming_requests,
)
from tests.e2e.test_knowledge import knowledge_config, put
from tests.e2e.test_pipeline import edits_of
from tests.e2e.test_rights import wiki_config
from tests.e2e.test_write_deadline import HoldingProxy
from tests.support.chroma_server import ChromaServer
from tests.support.tcp_relay import TcpRelay

pytestmark = pytest.mark.e2e

KNOWLEDGE_API = Path(sys.executable).parent / "knowledge-api"
# Put at once, 50 in flight, to the two workers of one queue: enough for both to race
# for every job. 2,000 took a minute of both cores each run and proved nothing more.
DOCUMENTS = 500


@pytest.fixture
def chroma(tmp_path: Path) -> Iterator[ChromaServer]:
    server = ChromaServer(tmp_path / "chroma")
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def shared_storage(postgres) -> str:
    url = await postgres.create_database()
    return f'\n[storage]\nurl = "{url}"\n'


def write_configs(
    bot: BotHarness, count: int, extra: str, **settings: object
) -> list[tuple[Path, int]]:
    """`count` configs for processes of one bot: the same account, data folder and
    storage; an ingestion API port each. Returns (config, port) pairs."""
    bot.storage_toml = ""  # the shared storage is in `extra`
    written = []
    for n in range(count):
        port = free_port()
        bot.config_path = bot.folder / f"config-{n}.toml"
        bot.write_config(knowledge_config(port) + extra, **settings)  # type: ignore[arg-type]
        written.append((bot.config_path, port))
    return written


def logged(path: Path, pattern: str) -> bool:
    return path.exists() and re.search(pattern, path.read_text()) is not None


async def wait_for_log(path: Path, pattern: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not logged(path, pattern):
        assert process.poll() is None, f"the process stopped:\n{path.read_text()}"
        assert time.monotonic() < deadline, f"no {pattern!r} in:\n{path.read_text()}"
        await asyncio.sleep(0.2)


@pytest.fixture
async def bot_processes(bot: BotHarness, tmp_path: Path) -> AsyncIterator[list[BotProcess]]:
    started: list[BotProcess] = []
    yield started
    for process in started:
        process.stop(signal.SIGKILL)
    for log in sorted(tmp_path.glob("bot-*.log")):
        print(f"--- {log.name}\n{log.read_text()}")


def two_bot_configs(
    bot: BotHarness, alice, llm, chroma: ChromaServer, shared_storage: str
) -> list[tuple[Path, int]]:
    """Configs of two processes of one bot on shared Chroma and storage, with a
    3-second lease, answers streamed and a placeholder at once."""
    extra = (
        f'[knowledge]\nchroma_url = "{chroma.url}"\n'
        + llm_config(llm)
        + "stream_edit_seconds = 0.2\n"
        + shared_storage
    )
    return write_configs(
        bot,
        2,
        extra,
        allowed_users=[alice.user_id],
        placeholder_after_seconds=0,
        shutdown_grace_seconds=0,
        lease_seconds=3,
    )


async def active_and_standby(
    bot: BotHarness,
    alice,
    started: list[BotProcess],
    configs: list[Path],
    logs: list[Path],
    port: int,
) -> tuple[BotProcess, BotProcess, str]:
    """The first config's process active, the second's standing by, a room of alice's with
    the bot in it, and the handbook's travel page put through the first's API."""
    first = BotProcess(bot, logs[0], configs[0])
    started.append(first)
    await wait_for_log(logs[0], "active: this process syncs", first.process)
    second = BotProcess(bot, logs[1], configs[1])
    started.append(second)
    await wait_for_log(logs[1], "standing by", second.process)
    room = await alice.create_room([bot.user_id])
    await alice.wait_for(room, membership_of(bot.user_id, "join"), timeout=START_SECONDS)
    await put_document(port)
    return first, second, room


async def test_a_standby_takes_over_from_a_killed_active_bot_and_answers_once(
    people, bot, llm, chroma, shared_storage, bot_processes, tmp_path
):
    alice = await people("alice")
    llm.respond = reading_model
    (first_config, port), (second_config, _) = two_bot_configs(
        bot, alice, llm, chroma, shared_storage
    )
    logs = [tmp_path / "bot-0.log", tmp_path / "bot-1.log"]
    first, second, room = await active_and_standby(
        bot, alice, bot_processes, [first_config, second_config], logs, port
    )
    held = llm.held = asyncio.Event()
    llm.hold_after = 2
    question = await alice.say(room, "how are trains booked?", mentions=[bot.user_id])
    placeholder = await alice.wait_for(room, replies_to(question), timeout=60)
    assert body(placeholder) == strings.PLACEHOLDER
    await alice.wait_for(room, edits_of(placeholder["event_id"]), timeout=60)
    assert not logged(logs[1], "active: this process syncs"), "the standby stood by"

    assert first.stop(signal.SIGKILL) == -signal.SIGKILL
    held.set()
    asked_before = streaming_requests(llm)
    await assert_answered_once_in(alice, room, question, placeholder["event_id"])
    assert logged(logs[1], "active: this process syncs")
    assert streaming_requests(llm) == asked_before + 1, "answered once, by the standby"

    # A later question is answered by the new active process.
    again = await alice.say(room, "how are trains booked again?", mentions=[bot.user_id])
    reply = await alice.wait_for(room, replies_to(again), timeout=60)
    await alice.wait_for(room, answered(reply["event_id"]), timeout=60)
    assert second.stop(signal.SIGTERM) == 0
    bot.config_path = second_config
    assert await pending_after_stop(bot) == []


async def put_queued(http: aiohttp.ClientSession, port: int, n: int) -> None:
    url = f"http://127.0.0.1:{port}/api/v1/collections/handbook/documents/doc-{n}"
    document = {"title": f"Page {n}", "content": f"Page {n} says that rule {n} applies."}
    headers = {"Authorization": "Bearer wiki-token"}
    async with http.put(url, json=document, headers=headers) as response:
        assert response.status in (200, 202), await response.text()


async def test_documents_put_concurrently_to_two_workers_are_each_indexed_once(
    bot, chroma, shared_storage, tmp_path
):
    extra = f'[knowledge]\nchroma_url = "{chroma.url}"\n' + shared_storage
    configs = write_configs(bot, 2, extra)
    logs = [tmp_path / f"api-{n}.log" for n in range(2)]
    workers = [
        subprocess.Popen(
            [str(KNOWLEDGE_API), "--config", str(config)],
            cwd=ROOT,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
        )
        for (config, _), log in zip(configs, logs, strict=True)
    ]
    try:
        for worker, log in zip(workers, logs, strict=True):
            await wait_for_log(log, "ingestion API on", worker)
        ports = [port for _, port in configs]
        limit = aiohttp.TCPConnector(limit=50)
        async with aiohttp.ClientSession(connector=limit) as http:
            await asyncio.gather(*(put_queued(http, ports[n % 2], n) for n in range(DOCUMENTS)))
        done = re.compile(r"job (\d+) \(put handbook/doc-(\d+)\): indexed")
        deadline = time.monotonic() + 600
        while True:
            finished = [done.findall(log.read_text()) for log in logs]
            if sum(map(len, finished)) >= DOCUMENTS:
                break
            assert time.monotonic() < deadline, f"{sum(map(len, finished))} of {DOCUMENTS}"
            await asyncio.sleep(1)
        documents = Counter(doc for found in finished for _, doc in found)
        assert len(documents) == DOCUMENTS and set(documents.values()) == {1}, "each once"
        assert all(finished), "both workers took jobs"
        async with aiohttp.ClientSession() as http:
            url = f"http://127.0.0.1:{ports[1]}/api/v1/collections"
            headers = {"Authorization": "Bearer wiki-token"}
            async with http.get(url, headers=headers) as response:
                sizes = {c["name"]: c["documents"] for c in (await response.json())["collections"]}
        assert sizes["handbook"] == DOCUMENTS
    finally:
        for worker in workers:
            worker.kill()
            worker.wait(timeout=30)
        for log in logs:
            print(f"--- {log.name}\n{log.read_text()[-3000:]}")


async def test_a_backlog_after_a_restart_is_answered_whole_and_in_the_order_it_came(people, bot):
    """One answer worker: the 40 questions a bot finds after a restart (more than the
    homeserver puts in one sync: the rest are read back) are each answered once, in order.
    (With a task per message, as before, they came in any order.)"""
    alice = await people("alice")
    bot.write_config(
        "[guardrails]\nuser_questions_per_minute = 0\nroom_questions_per_minute = 0\n",
        allowed_users=[alice.user_id],
        answer_workers=1,
    )
    await bot.start()
    room = await alice.create_room([bot.user_id])
    await alice.wait_for(room, membership_of(bot.user_id, "join"))
    await bot.stop()
    questions = [
        await alice.say(room, f"question number {n}?", mentions=[bot.user_id]) for n in range(40)
    ]
    await bot.start()

    def replied() -> list[str]:
        return [
            e["content"]["m.relates_to"]["m.in_reply_to"]["event_id"]
            for e in alice.seen(room, lambda e: e.get("sender") == bot.user_id)
            if "m.in_reply_to" in e["content"].get("m.relates_to", {})
        ]

    await alice.wait_until(lambda: len(replied()) >= len(questions), timeout=120)
    assert replied() == questions


async def test_a_document_restricted_through_a_knowledge_api_process_is_denied_by_the_bot(
    people, bot, wiki, chroma, shared_storage, tmp_path
):
    """The bot caches alice's right to the budget page for ten minutes; the page is
    replaced through another process (the bot indexes nothing itself); the bot's next
    answer asks the wiki again."""
    alice = await people("alice")
    bot_port, api_port = free_port(), free_port()
    text = (
        wiki_config(wiki, tmp_path, bot_port)
        + f'[knowledge]\nchroma_url = "{chroma.url}"\n[rights]\ncache_seconds = 600\n'
        + shared_storage
    )
    bot.storage_toml = ""
    bot.config_path = bot.folder / "api.toml"
    bot.write_config(text.replace(f"port = {bot_port}", f"port = {api_port}"))
    text = text.replace("[knowledge]\n", "[knowledge]\nindexing = false\n")
    api_log = tmp_path / "api.log"
    api = subprocess.Popen(
        [str(KNOWLEDGE_API), "--config", str(bot.config_path)],
        cwd=ROOT,
        stdout=api_log.open("w"),
        stderr=subprocess.STDOUT,
    )
    try:
        bot.config_path = bot.folder / "config.toml"
        bot.write_config(text, allowed_users=[alice.user_id])
        wiki.acl = {localpart_of(alice.user_id): {("wiki", "budget")}}
        await bot.start()
        budget = {"title": "Budget 2027", "content": "The travel budget for 2027 is 42,000 euros."}
        await wait_for_log(api_log, "ingestion API on", api)
        await put(bot_port, "wiki", "budget", budget)  # queued by the bot, indexed by the other
        direct = await room_with_bot(alice, bot, direct=True)
        question = await alice.say(direct, "what is the travel budget?")
        answer = await alice.wait_for(direct, replies_to(question), timeout=60)
        assert "42,000 euros" in answer["content"]["body"]

        wiki.acl = {}
        budget["content"] = "The travel budget for 2027 is 43,000 euros."
        await put(api_port, "wiki", "budget", budget)
        question = await alice.say(direct, "what is the travel budget now?")
        answer = await alice.wait_for(direct, replies_to(question), timeout=60)
        assert "euros" not in answer["content"]["body"] and "Budget 2027" not in str(answer)
        assert len(wiki.requests) == 2, "asked again, not answered from the cache"
        assert len(re.findall(r"put wiki/budget\): indexed", api_log.read_text())) == 2
    finally:
        api.kill()
        api.wait(timeout=30)
        print(api_log.read_text())


async def test_a_standby_takes_over_while_the_active_bots_send_is_held(
    people, bot, llm, chroma, postgres, shared_storage, bot_processes, homeserver, tmp_path
):
    """The active process's placeholder is held by the network when its database goes
    away: its lease runs out, its send is abandoned within the lease (never to land
    later), the standby takes over, and the question is answered exactly once."""
    alice = await people("alice")
    llm.respond = reading_model
    proxy = HoldingProxy(homeserver.url)
    proxy_runner = await proxy.start()
    relay = await TcpRelay(postgres.port).start()
    (first_config, port), (second_config, _) = two_bot_configs(
        bot, alice, llm, chroma, shared_storage
    )
    # The first process reaches the homeserver through the proxy, its database through
    # the relay; the second reaches both directly.
    first_config.write_text(
        first_config.read_text()
        .replace(f'"{homeserver.url}"', f'"{proxy.url}"')
        .replace(f"@127.0.0.1:{postgres.port}/", f"@127.0.0.1:{relay.port}/")
    )
    logs = [tmp_path / "bot-0.log", tmp_path / "bot-1.log"]
    try:
        first, second, room = await active_and_standby(
            bot, alice, bot_processes, [first_config, second_config], logs, port
        )

        proxy.holding = True
        question = await alice.say(room, "how are trains booked?", mentions=[bot.user_id])
        await asyncio.wait_for(proxy.held.wait(), START_SECONDS)
        relay.cut()  # the first process can renew its lease no more
        await wait_for_log(logs[1], "active: this process syncs", second.process)
        await asyncio.wait_for(proxy.dropped.wait(), START_SECONDS)  # it gave the send up
        proxy.release.set()

        reply = await alice.wait_for(room, replies_to(question), timeout=START_SECONDS)
        await alice.wait_for(room, answered(reply["event_id"]), timeout=START_SECONDS)
        await settle(alice, room)  # what came late would have come by now
        assert [e["event_id"] for e in alice.seen(room, replies_to(question))] == [
            reply["event_id"]
        ], "one reply: the held placeholder never landed"
        # Its send was abandoned for the lease, and the question left to the other
        # process. (A send held across a renewal ends with the lease as renewed, so the
        # abandonment is never taken for a failed answer: account.write_deadline.)
        assert logged(logs[0], "stays pending: the lease ran out during the write")
        # The process that lost its database stands by again, to take over once it is
        # back (it stopped contending for good on Python 3.11, leadership.py).
        await wait_for_log(logs[0], "standing by: another process syncs", first.process)
    finally:
        proxy.release.set()
        await proxy.session.close()
        await proxy_runner.cleanup()
        await relay.stop()
