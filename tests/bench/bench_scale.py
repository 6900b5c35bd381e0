"""Several processes, one bot: ingestion throughput with one and two workers, the time a
standby takes to answer after the active bot is killed, and the memory of a 500-message
burst.

    .venv/bin/python -m tests.bench.bench_scale [--documents 600] [--burst 500]

Everything real and local: a throw-away PostgreSQL (tests/support/postgres.py), `chroma
run` servers, Synapse from .venv-synapse, and `knowledge-api` / `python -m bot` processes.
Ingestion: documents PUT (queued) to the workers' APIs at once; throughput is counted
from the workers' own "job … indexed" log lines (first to last), so model loading is
left out. Failover: the active bot is killed with SIGKILL; then a question is asked and
the time to its reply is taken, with `lease_seconds` 3 and 15. Burst: the bot (search-
only answers from the handbook, no model endpoint) is paused with SIGSTOP while `--burst`
questions are sent, then let go; its resident memory is sampled until every question
has a reply.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import aiohttp

from bot.dev.synapse import Homeserver, ensure_synapse_venv, free_port, start_homeserver
from tests.e2e.conftest import PASSWORD, ROOT, BotHarness
from tests.e2e.people import Person, membership_of, replies_to
from tests.e2e.test_knowledge import knowledge_config
from tests.support.chroma_server import ChromaServer
from tests.support.postgres import PostgresServer

KNOWLEDGE_API = Path(sys.executable).parent / "knowledge-api"
STAMP = "%Y-%m-%d %H:%M:%S,%f"
NO_LIMITS = "[guardrails]\nuser_questions_per_minute = 0\nroom_questions_per_minute = 0\n"
DONE = re.compile(r"^(\S+ \S+) INFO core\.knowledge\.queue: job \d+ \(put .*\): indexed", re.M)


def start(command: list[str], log: Path) -> subprocess.Popen:
    env = {**os.environ, "BOT_PASSWORD": PASSWORD}
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT
    )


async def wait_for_log(log: Path, pattern: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not (log.exists() and re.search(pattern, log.read_text())):
        if time.monotonic() > deadline:
            raise SystemExit(f"no {pattern!r} in {log}:\n{log.read_text()[-2000:]}")
        await asyncio.sleep(0.2)


async def put_all(ports: list[int], documents: int) -> None:
    headers = {"Authorization": "Bearer wiki-token"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=50)) as http:

        async def put(n: int) -> None:
            port = ports[n % len(ports)]
            url = f"http://127.0.0.1:{port}/api/v1/collections/handbook/documents/d{n}"
            text = f"Page {n}. " + " ".join(f"Rule {n}.{k} applies to team {k}." for k in range(8))
            document = {"title": f"Page {n}", "content": text}
            async with http.put(url, json=document, headers=headers) as response:
                assert response.status in (200, 202), await response.text()

        await asyncio.gather(*(put(n) for n in range(documents)))


def config_of(folder: Path, port: int, extra: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.toml"
    path.write_text(
        '[matrix]\nhomeserver = "http://127.0.0.1:1"\nuser_id = "@bot:localhost"\n'
        'password_env = "UNUSED"\n'
        f'[bot]\ndata_dir = "{folder / "data"}"\n' + knowledge_config(port) + extra
    )
    return path


async def ingestion_rate(workers: int, pg: PostgresServer, tmp: Path, documents: int) -> float:
    chroma = ChromaServer(tmp / f"chroma-ingest-{workers}")
    chroma.start()
    storage = f'[storage]\nurl = "{await pg.create_database()}"\n'
    extra = f'[knowledge]\nchroma_url = "{chroma.url}"\n' + storage
    ports = [free_port() for _ in range(workers)]
    logs = [tmp / f"ingest-{workers}-{n}.log" for n in range(workers)]
    configs = [config_of(tmp / f"i{workers}-{n}", port, extra) for n, port in enumerate(ports)]
    processes = [
        start([str(KNOWLEDGE_API), "--config", str(config)], log)
        for config, log in zip(configs, logs, strict=True)
    ]
    try:
        for log in logs:
            await wait_for_log(log, "ingestion API on")
        await put_all(ports, documents)
        deadline = time.monotonic() + 1800
        while True:
            stamps = sorted(stamp for log in logs for stamp in DONE.findall(log.read_text()))
            if len(stamps) >= documents:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"{len(stamps)} of {documents} indexed")
            await asyncio.sleep(1)
        first, last = (datetime.strptime(s, STAMP) for s in (stamps[0], stamps[-1]))
        return (documents - 1) / (last - first).total_seconds()
    finally:
        for process in processes:
            process.kill()
            process.wait()
        chroma.stop()


def is_reply(event: dict) -> bool:
    return "m.in_reply_to" in event["content"].get("m.relates_to", {})


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024  # type: ignore[union-attr]


async def bot_with_alice(
    hs: Homeserver, tmp: Path, name: str, extra: str, processes: int, **bot: object
) -> tuple[Person, str, str, list[subprocess.Popen], list[Path]]:
    """Bot processes of one account (the first active), and alice in a room with it:
    (alice, room, the bot's user id, processes, their logs)."""
    alice_id = hs.register(f"alice-{name}", PASSWORD)
    alice = await Person.login(hs.url, alice_id, PASSWORD, tmp / f"alice-{name}")
    harness = BotHarness(hs, tmp / name)
    harness.folder.mkdir()
    started, logs = [], []
    for n in range(processes):
        harness.config_path = harness.folder / f"config-{n}.toml"
        harness.write_config(knowledge_config(free_port()) + extra, allowed_users=[alice_id], **bot)
        logs.append(tmp / f"{name}-{n}.log")
        command = [sys.executable, "-m", "bot", "--config", str(harness.config_path)]
        started.append(start(command, logs[-1]))
        await wait_for_log(logs[-1], "active: this process" if n == 0 else "standing by")
    room = await alice.create_room([harness.user_id])
    await alice.wait_for(room, membership_of(harness.user_id, "join"), timeout=120)
    await wait_for_log(logs[0], "models loaded")
    return alice, room, harness.user_id, started, logs


async def failover_seconds(
    hs: Homeserver, tmp: Path, extra: str, lease: float
) -> tuple[float, float]:
    """(kill → the standby synced, kill → the reply to a question asked at the kill)."""
    alice, room, bot_id, (active, standby), logs = await bot_with_alice(
        hs, tmp, f"failover-{int(lease)}", extra, 2, lease_seconds=lease
    )
    try:
        await wait_for_log(logs[1], "models loaded")
        killed = time.monotonic()
        active.send_signal(signal.SIGKILL)
        question = await alice.say(room, "who may book trains?", mentions=[bot_id])
        await wait_for_log(logs[1], "ready: synced")
        synced = time.monotonic() - killed
        await alice.wait_for(room, replies_to(question), timeout=120)
        return synced, time.monotonic() - killed
    finally:
        for process in (active, standby):
            process.kill()
            process.wait()
        await alice.close()


async def burst_memory(
    hs: Homeserver, tmp: Path, extra: str, burst: int
) -> tuple[float, float, float]:
    """(RSS before, peak RSS while answering, seconds to reply to all) in MiB."""
    alice, room, bot_id, (bot,), _ = await bot_with_alice(hs, tmp, "burst", extra + NO_LIMITS, 1)
    try:
        warm = await alice.say(room, "warm up", mentions=[bot_id])
        await alice.wait_for(room, replies_to(warm), timeout=120)
        before = rss_mb(bot.pid)
        bot.send_signal(signal.SIGSTOP)
        questions = [
            await alice.say(room, f"question {n} about trains?", mentions=[bot_id])
            for n in range(burst)
        ]
        started = time.monotonic()
        bot.send_signal(signal.SIGCONT)
        peak = before
        asked = set(questions)
        while True:
            peak = max(peak, rss_mb(bot.pid))
            answered = {
                e["content"]["m.relates_to"]["m.in_reply_to"]["event_id"]
                for e in alice.seen(room, is_reply)
            }
            if asked <= answered:
                return before, peak, time.monotonic() - started
            await asyncio.sleep(0.2)
    finally:
        bot.kill()
        bot.wait()
        await alice.close()


async def main(documents: int, burst: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        pg = PostgresServer().start()
        try:
            print("ingestion: knowledge-api processes on one PostgreSQL and chroma run")
            for workers in (1, 2):
                rate = await ingestion_rate(workers, pg, tmp, documents)
                print(f"  {workers} worker{'s' if workers > 1 else ''}: {rate:7.1f} documents/s")
            hs = start_homeserver(tmp / "synapse", ensure_synapse_venv(ROOT / ".venv-synapse"))
            chroma = ChromaServer(tmp / "chroma-bot")
            chroma.start()
            try:
                knowledge = f'[knowledge]\nchroma_url = "{chroma.url}"\n'

                async def fresh_storage() -> str:
                    # One database per bot account: its inbox and sync token are its own.
                    return f'[storage]\nurl = "{await pg.create_database()}"\n'

                for lease in (3.0, 15.0):
                    extra = knowledge + await fresh_storage()
                    synced, replied = await failover_seconds(hs, tmp, extra, lease)
                    print(
                        f"failover, lease_seconds {lease:4.0f}: standby synced {synced:5.1f} s,"
                        f" replied {replied:5.1f} s after the kill"
                    )
                extra = knowledge + await fresh_storage()
                before, peak, seconds = await burst_memory(hs, tmp, extra, burst)
                print(
                    f"burst of {burst} questions, 8 answer workers: RSS {before:.0f} MiB before,"
                    f" {peak:.0f} MiB at most (+{peak - before:.0f}); all replied in {seconds:.1f} s"
                )
            finally:
                chroma.stop()
                hs.stop()
        finally:
            pg.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=600)
    parser.add_argument("--burst", type=int, default=500)
    args = parser.parse_args()
    asyncio.run(main(args.documents, args.burst))
