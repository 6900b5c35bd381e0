"""A person's catch-up over 5 rooms of 1,000 new messages each: time and model calls.

    .venv/bin/python -m tests.bench.bench_catchup [--rooms 5] [--messages 1000]

Starts a real Synapse on a free port (as the tests do), fills the rooms (every 50th
message mentions the reader), and builds the reader's catch-up with the bot's desk:
history read back page by page from the homeserver, sections decided per room, and the
rest of each room summarised by the project's scripted OpenAI-compatible server on real
HTTP (answering at once, so the time is the time outside the model); then again without
a model (extractive).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from nio import RoomCreateResponse

from bot.dev.synapse import ensure_synapse_venv, start_homeserver
from bot.features.catchup.desk import CatchupDesk
from bot.features.catchup.digests import SqlDigestStore
from bot.features.catchup.receipts import SqlReceiptStore
from bot.inbox.audience import Audiences
from bot.matrix.nio_account import NioAccount
from core.catchup.catchup import build_catchup_markdown
from core.config import parse_config
from core.config.llm import LlmSettings
from core.ids import UserID
from core.llm.client import LlmClient
from core.llm.prompts import load_prompts
from core.storage.sqlite import SqliteDatabase
from core.summaries.summarizer import Summarizer
from core.timerange import TimeExpressionFinder
from tests.bench.bench_summaries import PASSWORD, ROOT, login, scripted_model
from tests.support.fake_llm import FakeLlm

CONFIG = """
[matrix]
homeserver = "{url}"
user_id = "{bot}"
password = "unused"

[bot]
data_dir = "{folder}"
"""


async def fill(client, room: str, reader: str, count: int) -> None:
    async def one(n: int) -> None:
        body = f"message {n}: a thought about the release, with some detail to read like chat"
        content = {"msgtype": "m.text", "body": body}
        if n % 50 == 0:
            content = {
                "msgtype": "m.text",
                "body": f"{reader}: can you check item {n}?",
                "m.mentions": {"user_ids": [reader]},
            }
        await client.room_send(room, "m.room.message", content)

    for batch in range(0, count, 50):
        await asyncio.gather(*(one(n) for n in range(batch, min(batch + 50, count))))


async def measure(desk: CatchupDesk, reader: str, llm: FakeLlm | None) -> tuple[float, int, int]:
    if llm is not None:
        llm.history.clear()
    started = time.perf_counter()
    rooms = await desk.build(UserID(reader), None)
    build_catchup_markdown("**What you missed**", rooms)
    calls = len(llm.history) if llm is not None else 0
    return time.perf_counter() - started, calls, sum(room.total for room in rooms)


async def main(room_count: int, messages: int) -> None:
    python = ensure_synapse_venv(Path(os.environ.get("SYNAPSE_VENV", ROOT / ".venv-synapse")))
    with tempfile.TemporaryDirectory() as folder:
        server = start_homeserver(Path(folder) / "synapse", python)
        llm = await FakeLlm().start()
        llm.respond = scripted_model
        client = LlmClient(LlmSettings(url=llm.url, model="test-model", max_concurrency=8))
        db = await SqliteDatabase.open(Path(folder) / "state.sqlite3")
        try:
            ids = [server.register(name, PASSWORD) for name in ("poster", "reader", "bot")]
            poster, reader, bot = [await login(server.url, user) for user in ids]
            started = time.perf_counter()
            for _ in range(room_count):
                made = await poster.room_create(invite=[ids[1], ids[2]])
                assert isinstance(made, RoomCreateResponse), made
                await reader.join(made.room_id)
                await bot.join(made.room_id)
                await fill(poster, made.room_id, ids[1], messages)
            print(
                f"seeded {room_count} rooms of {messages} messages in "
                f"{time.perf_counter() - started:.0f} s"
            )
            matrix = NioAccount(bot)
            audiences = Audiences(matrix)
            audiences.observe(await bot.sync(timeout=0, full_state=True))
            settings = parse_config(
                CONFIG.format(url=server.url, bot=ids[2], folder=folder),
                origin="bench",
                env={},
                base_dir=Path(folder),
            )
            holder = SimpleNamespace(current=settings)
            stores = (await SqlReceiptStore.open(db), await SqlDigestStore.open(db))
            for model, title in ((client, "with a model"), (None, "without a model")):
                summarizer = Summarizer(model, load_prompts, None)
                desk = CatchupDesk(
                    matrix,
                    *stores,
                    summarizer,
                    holder,
                    audiences,  # type: ignore[arg-type]
                    TimeExpressionFinder(),
                )
                seconds, calls, count = await measure(desk, ids[1], llm if model else None)
                print(
                    f"catch-up {title}: {count} new messages in {room_count} rooms, "
                    f"{seconds:.1f} s outside the model, {calls} model calls"
                )
            for person in (poster, reader, bot):
                await person.close()
        finally:
            await db.close()
            await client.close()
            await llm.close()
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=5)
    parser.add_argument("--messages", type=int, default=1000)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.rooms, arguments.messages))
