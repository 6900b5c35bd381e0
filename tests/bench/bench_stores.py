"""What the stores cost the bot per message and per answer, on SQLite and on PostgreSQL.

    .venv/bin/python -m tests.bench.bench_stores [--backend sqlite|postgres|both] [--events 300]

Stores opened as the bot opens them: a SQLite file each in a temporary folder, or one
database of a throw-away PostgreSQL server (tests/support/postgres.py). One message at a
time: per event, the store calls of bot/inbox/sync.py and bot/inbox/dispatcher.py for an addressed
message asking every routing fact, up to `mark_done`; per answer, those made while
answering (see one_event, one_answer). Round trips: calls on the Database interface,
counted by a proxy, a transaction as two more (BEGIN, COMMIT). Then a burst of 500 events
at once, as after a reconnect: plainly, and in asyncio's debug mode (itself much slower)
counting its "Executing ... took" warnings: callbacks that held the loop over 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.inbox.state import PendingEvent, SqlStateStore
from core.config.storage import StorageSettings
from core.feedback.store import AnswerRecord, SourceRecord, SqlFeedbackStore
from core.history.line_store import RoomLine
from core.memory.store import SqlMemoryStore, Turn
from core.storage.database import Database, Row
from core.storage.opening import Storage
from tests.support.postgres import PostgresServer

ROOMS = 20
THREADS = 2_000  # the bot's earlier replies, each the root of a thread
WARM_UP = 20
BURST = 500
ASKER = "@alice:example.org"
QUESTION = "@bot how do I renew the VPN certificate on a laptop that is not enrolled yet?"
TRACE = (
    ("prestep", 0.31, {"verdict": "ok", "rephrased": QUESTION, "tokens": 412}),
    ("retrieve", 0.02, {"vector": 15, "keyword": 15, "fused": 15, "filters": ["handbook"]}),
    ("rights", 0.01, {"allowed": 15, "denied": 0, "unchecked": 0}),
    ("answer", 1.84, {"model": "m", "prompt_version": "7", "tokens": 1830}),
    ("support", 0.42, {"supported": True, "score": 0.91}),
)
SOURCES = tuple(SourceRecord("wiki", f"d{i}", f"Doc {i}", f"https://w/{i}", 0.9) for i in range(5))
HEADER = """\
               per event              per answer           burst wall time    slow
backend   mean ms  p95 ms trips   mean ms  p95 ms trips      plain    debug  calls"""
Step = Callable[["Stores", int], Awaitable[None]]  # one message's calls


@dataclass
class RoundTrips:
    count: int = 0


class CountingDatabase:
    """A Database that counts the calls made on it and on its transactions."""

    def __init__(self, inner: Database, trips: RoundTrips) -> None:
        self.inner, self.trips, self.dialect = inner, trips, inner.dialect

    def _counted(self) -> Database:
        self.trips.count += 1
        return self.inner

    async def execute(self, sql: str, *args: Any) -> int:
        return await self._counted().execute(sql, *args)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        await self._counted().executemany(sql, rows)

    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        return await self._counted().fetch(sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        return await self._counted().fetchrow(sql, *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self._counted().fetchval(sql, *args)

    async def run_script(self, script: str) -> None:
        await self._counted().run_script(script)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        self.trips.count += 2  # BEGIN and COMMIT
        async with self.inner.transaction() as tx:
            yield CountingDatabase(tx, self.trips)

    async def close(self) -> None:
        await self.inner.close()


@dataclass
class Stores:
    state: SqlStateStore
    memory: SqlMemoryStore
    feedback: SqlFeedbackStore
    trips: RoundTrips  # so far, over all three


async def open_stores(storage: Storage) -> Stores:
    trips = RoundTrips()
    state = await SqlStateStore.open(CountingDatabase(await storage.database("state"), trips))
    memory = await SqlMemoryStore.open(CountingDatabase(await storage.database("memory"), trips))
    feedback = CountingDatabase(await storage.database("feedback"), trips)
    return Stores(state, memory, await SqlFeedbackStore.open(feedback), trips)


def room_of(n: int) -> str:
    return f"!room{n % ROOMS}:example.org"


def thread_of(n: int) -> str:
    return f"$thread{n % THREADS}"  # a thread the bot is in, in the room of message n


async def routing_facts(stores: Stores, n: int) -> None:
    """The store calls of Dispatcher._facts, in its order."""
    room, thread = room_of(n), thread_of(n)
    await stores.state.joined_room(room)  # the room's cut-off
    await stores.state.is_bot_message(f"$reply{n % THREADS}")
    await stores.state.bot_in_thread(room, thread)
    await stores.state.joined_room(room)  # a direct chat?
    await stores.feedback.pending_ask(room, thread, ASKER)
    await stores.state.was_received(f"$question{n - 1}")


async def one_event(stores: Stores, n: int) -> None:
    room, event_id = room_of(n), f"$question{n}"
    content = {"msgtype": "m.text", "body": QUESTION, "m.relates_to": {"event_id": thread_of(n)}}
    source = {"event_id": event_id, "type": "m.room.message", "sender": ASKER, "content": content}
    await routing_facts(stores, n)  # SyncLoop._addressed: Dispatcher.route
    await stores.state.joined_room(room)  # Dispatcher.observe
    await stores.memory.add_line(
        room, RoomLine(event_id, ASKER, QUESTION, time.time(), "https://matrix.to")
    )
    await stores.state.store_batch(f"batch{n}", [PendingEvent(room, source)])
    await routing_facts(stores, n)  # Dispatcher.handle: route again
    await stores.state.mark_done(event_id)


def answer_record(n: int, reply_id: str) -> AnswerRecord:
    trace = [{"name": name, "seconds": secs, "details": details} for name, secs, details in TRACE]
    return AnswerRecord(
        f"answer{n}",
        reply_id,
        room_of(n),
        ASKER,
        QUESTION,
        QUESTION,
        "Renew it [1].",
        "answer",
        "m",
        "7",
        trace,
        SOURCES,
        time.time(),
        (ASKER, "@bob:example.org", "@carol:example.org"),
    )


async def one_answer(stores: Stores, n: int) -> None:
    room, thread, event_id, reply_id = room_of(n), thread_of(n), f"$question{n}", f"$answer{n}"
    await routing_facts(stores, n)  # Dispatcher._request
    await stores.state.joined_room(room)  # the request's is_direct
    await stores.memory.turn(room, thread)
    await stores.memory.memories(room, ASKER)
    await stores.state.record_bot_message(reply_id, room, thread)
    await stores.state.record_reply(event_id, reply_id)
    await stores.feedback.note_answer_event(reply_id, f"answer{n}")
    await stores.state.record_reply(event_id, reply_id)
    turn = Turn(QUESTION, QUESTION, "answered", time.time())
    await stores.memory.set_turn(room, thread, turn)
    await stores.memory.set_turn(room, event_id, turn)
    await stores.feedback.store_answer(answer_record(n, reply_id))


async def measure(stores: Stores, step: Step, numbers: range) -> str:
    """Mean and p95 in ms, and round trips, of `step` run once per number in turn."""
    timings, before = [], stores.trips.count
    for n in numbers:
        started = time.perf_counter()
        await step(stores, n)
        timings.append((time.perf_counter() - started) * 1000)
    mean, p95 = statistics.mean(timings), statistics.quantiles(timings, n=20)[18]
    return f"{mean:7.2f} {p95:7.2f} {(stores.trips.count - before) / len(numbers):5.1f}"


class SlowCallbacks(logging.Handler):
    """Counts asyncio's debug-mode warnings of a callback that held the loop too long."""

    count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Executing") and " took " in record.getMessage():
            self.count += 1


async def burst(stores: Stores, numbers: range, debug: bool) -> tuple[float, int]:
    """The burst's wall time in seconds, and how many callbacks blocked the loop."""
    loop, logger, slow = asyncio.get_running_loop(), logging.getLogger("asyncio"), SlowCallbacks()
    logger.addHandler(slow)
    loop.set_debug(debug)
    loop.slow_callback_duration = 0.05
    try:
        started = time.perf_counter()
        await asyncio.gather(*(one_event(stores, n) for n in numbers))
        return time.perf_counter() - started, slow.count
    finally:
        loop.set_debug(False)
        logger.removeHandler(slow)


async def bench(name: str, storage: Storage, events: int) -> str:
    try:
        stores = await open_stores(storage)
        for n in range(THREADS):
            await stores.state.record_bot_message(f"$reply{n}", room_of(n), thread_of(n))
            if n < ROOMS:
                await stores.state.record_join(room_of(n), 0, False)
        for n in range(WARM_UP):
            await one_event(stores, n)
            await one_answer(stores, n)
        measured = range(WARM_UP, WARM_UP + events)
        per_event = await measure(stores, one_event, measured)
        per_answer = await measure(stores, one_answer, measured)
        plain, _ = await burst(stores, range(measured.stop, measured.stop + BURST), debug=False)
        after = measured.stop + BURST
        debug, slow = await burst(stores, range(after, after + BURST), debug=True)
    finally:
        await storage.close()
    return f"{name:<9} {per_event}   {per_answer}   {plain:6.2f} s {debug:6.2f} s {slow:5d}"


async def main(backend: str, events: int) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        if backend in ("sqlite", "both"):
            rows.append(await bench("sqlite", Storage(StorageSettings(), Path(folder)), events))
        if backend in ("postgres", "both"):
            server = PostgresServer().start()
            try:
                settings = StorageSettings(url=await server.create_database())
                rows.append(await bench("postgres", Storage(settings, Path(folder)), events))
            finally:
                server.stop()
    title = f"store calls of {events} messages one at a time, then {BURST} at once (burst)"
    print(title, HEADER, *rows, sep="\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--events", type=int, default=300)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.backend, arguments.events))
