"""Thousands of rooms on one bot: open files, threads and memory of the bot process as
rooms, their history and questions pile up.

    .venv/bin/python -m tests.bench.bench_rooms [--rooms 2000] [--asked 200]

A real Synapse (from .venv-synapse), the bot as its own process (`python -m bot`, with
embedded Chroma and SQLite, as the local demo runs), and one person who creates
`--rooms` rooms with the bot in them, says four lines in each (history windows of three
lines, so every room gets embedded history), then asks the bot in `--asked` of them.
Prints the bot's open files, threads and resident memory after it joined, after the
history, and after the answers. Open files should not grow with the number of rooms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp

from bot.dev.synapse import Homeserver, ensure_synapse_venv, start_homeserver
from tests.e2e.conftest import PASSWORD, ROOT, BotHarness

CONCURRENCY = 8
CONFIG = """
[memory]
window_lines = 3
window_overlap = 1
[guardrails]
user_questions_per_minute = 0
room_questions_per_minute = 0
[collections.handbook]
source = "wiki"
public = true
[sources.wiki]
token = "wiki-token"
"""


def resources(pid: int) -> str:
    status = Path(f"/proc/{pid}/status").read_text()
    rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]
    threads = re.search(r"Threads:\s+(\d+)", status).group(1)  # type: ignore[union-attr]
    files = len(os.listdir(f"/proc/{pid}/fd"))
    return f"open files {files:5d}   threads {threads:>4}   RSS {rss:6.0f} MiB"


async def gather_bounded(calls: Iterable[Callable[[], Awaitable[Any]]]) -> list[Any]:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(call: Callable[[], Awaitable[Any]]) -> Any:
        async with gate:
            return await call()

    return await asyncio.gather(*(one(call) for call in calls))


class Client:
    """A person on the client-server API, plain HTTP (fast enough for thousands of rooms)."""

    def __init__(self, http: aiohttp.ClientSession, url: str, token: str) -> None:
        self.http, self.url, self.token = http, url, token
        self.sent = 0

    @classmethod
    async def login(cls, http: aiohttp.ClientSession, hs: Homeserver, user: str) -> Client:
        body = {
            "type": "m.login.password",
            "identifier": {"type": "m.id.user", "user": user},
            "password": PASSWORD,
        }
        async with http.post(f"{hs.url}/_matrix/client/v3/login", json=body) as response:
            return cls(http, hs.url, (await response.json())["access_token"])

    async def call(self, method: str, path: str, body: dict | None = None) -> dict:
        headers = {"Authorization": f"Bearer {self.token}"}
        async with self.http.request(
            method, f"{self.url}/_matrix/client/v3{path}", json=body, headers=headers
        ) as response:
            answer = await response.json()
            assert response.status == 200, answer
            return answer

    async def create_room(self, invite: str) -> str:
        return (await self.call("POST", "/createRoom", {"invite": [invite]}))["room_id"]

    async def say(self, room: str, text: str, mention: str | None = None) -> str:
        self.sent += 1
        body: dict[str, Any] = {"msgtype": "m.text", "body": text}
        if mention:
            body = {
                "msgtype": "m.text",
                "body": f"bot: {text}",
                "m.mentions": {"user_ids": [mention]},
            }
        path = f"/rooms/{quote(room)}/send/m.room.message/bench{self.sent}-{time.time_ns()}"
        return (await self.call("PUT", path, body))["event_id"]

    async def bot_replied(self, room: str, bot: str) -> bool:
        found = await self.call("GET", f"/rooms/{quote(room)}/messages?dir=b&limit=20")
        return any(e["sender"] == bot and e["type"] == "m.room.message" for e in found["chunk"])

    async def joined(self, room: str, user: str) -> bool:
        members = await self.call("GET", f"/rooms/{quote(room)}/joined_members")
        return user in members["joined"]


async def wait_all(check: Callable[[str], Awaitable[bool]], rooms: list[str], what: str) -> None:
    deadline = time.monotonic() + 3600
    waiting = list(rooms)
    while waiting:
        done = await gather_bounded([lambda room=room: check(room) for room in waiting])
        waiting = [room for room, ok in zip(waiting, done, strict=True) if not ok]
        if time.monotonic() > deadline:
            raise SystemExit(f"{len(waiting)} rooms still wait for {what}")
        if waiting:
            await asyncio.sleep(2)


async def main(rooms: int, asked: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        hs = start_homeserver(tmp / "synapse", ensure_synapse_venv(ROOT / ".venv-synapse"))
        bot = BotHarness(hs, tmp / "bot")
        bot.folder.mkdir()
        alice = hs.register("alice", PASSWORD)
        bot.write_config(CONFIG, allowed_users=[alice])
        log = (tmp / "bot.log").open("w")
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "--config", str(bot.config_path)],
            cwd=ROOT,
            env={**os.environ, **bot.env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            async with aiohttp.ClientSession() as http:
                person = await Client.login(http, hs, "alice")
                await asyncio.sleep(20)  # the bot loads its models
                print(f"bot started, in no room:   {resources(process.pid)}")
                started = time.monotonic()
                made = await gather_bounded(
                    [lambda: person.create_room(bot.user_id) for _ in range(rooms)]
                )
                await wait_all(lambda room: person.joined(room, bot.user_id), made, "the bot")
                print(
                    f"in {rooms} rooms:{' ' * (17 - len(str(rooms)))}{resources(process.pid)}"
                    f"   ({time.monotonic() - started:.0f} s)"
                )
                lines = ("the release is on Friday", "who tests it?", "Dana does", "thanks")
                await gather_bounded(
                    [
                        lambda room=room, line=line: person.say(room, line)
                        for line in lines
                        for room in made
                    ]
                )
                await asyncio.sleep(30)  # the history windows are embedded
                print(f"with history in each:      {resources(process.pid)}")
                questions = made[:asked]
                started = time.monotonic()
                await gather_bounded(
                    [
                        lambda room=room: person.say(room, "when is the release?", bot.user_id)
                        for room in questions
                    ]
                )
                await wait_all(
                    lambda room: person.bot_replied(room, bot.user_id), questions, "an answer"
                )
                print(
                    f"after {asked} answers:{' ' * (13 - len(str(asked)))}{resources(process.pid)}"
                    f"   ({time.monotonic() - started:.0f} s)"
                )
        finally:
            process.kill()
            process.wait()
            hs.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=2000)
    parser.add_argument("--asked", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.rooms, args.asked))
