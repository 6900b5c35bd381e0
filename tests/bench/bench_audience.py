"""What deciding the audience costs per question and per post.

    .venv/bin/python -m tests.bench.bench_audience

A bot in ROOMS rooms of MEMBERS joined members each (plus a few invited), all sharing
its asker's room with the asker; the state is nio's own room objects as a sync leaves
them. `of_room` runs once per question (readers, open room, which rooms' knowledge they
may all get); `holds` runs before every post and streamed edit.
"""

from __future__ import annotations

import statistics
import time

from nio import AsyncClient, MatrixRoom

from bot.inbox.audience import Audiences
from bot.matrix.nio_account import NioAccount

BOT = "@bot:example.org"


def build_client(rooms: int, members: int) -> AsyncClient:
    client = AsyncClient("http://127.0.0.1:1", BOT)
    for number in range(rooms):
        room = MatrixRoom(f"!room{number}", BOT)
        room.add_member(BOT, "Bot", None)
        for member in range(members):
            # Every room shares the first ten people, so knowledge checks do real work.
            person = f"@p{member if member < 10 else number * members + member}:example.org"
            room.add_member(person, None, None)
        room.add_member(f"@invited{number}:example.org", None, None, invited=True)
        room.history_visibility = "joined" if number % 2 else "shared"
        client.rooms[room.room_id] = room
    return client


def measure(rooms: int, members: int, runs: int = 200) -> tuple[list[float], list[float]]:
    audiences = Audiences(NioAccount(build_client(rooms, members)))
    decide, check = [], []
    for _ in range(runs):
        started = time.perf_counter()
        audience = audiences.of_room("!room0")
        decide.append(time.perf_counter() - started)
        started = time.perf_counter()
        assert audiences.holds(audience)
        check.append(time.perf_counter() - started)
    return decide, check


def quantiles(samples: list[float]) -> str:
    cut = statistics.quantiles(samples, n=20)
    return f"p50 {cut[9] * 1000:.3f} ms, p95 {cut[18] * 1000:.3f} ms"


def main() -> None:
    for rooms, members in ((10, 10), (100, 50), (1000, 50), (3000, 20)):
        decide, check = measure(rooms, members)
        print(
            f"{rooms:>5} rooms x {members:>3} members: per question {quantiles(decide)}; "
            f"per post {quantiles(check)}"
        )


if __name__ == "__main__":
    main()
