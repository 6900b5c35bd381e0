"""Shared files on a fake account: read in the background, never ahead of a question."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from core.knowledge.documents import Document
from core.knowledge.extraction import Extracted
from tests.bot.harness import FileReading, eventually, running_bot

ANN, BEN = "@ann:fake.test", "@ben:fake.test"
FILES = """
[sources.matrix]
token = "matrix-token"
[collections.room-files]
source = "matrix"
[files]
collection = "room-files"
"""


@dataclass
class HeldReader:
    """Reads every file as its name, once the test lets it."""

    go: asyncio.Event = field(default_factory=asyncio.Event)

    async def extract(self, data: bytes, kind: str) -> Extracted:
        await self.go.wait()
        return Extracted(data.decode(), "text")


@dataclass
class KeptDocuments:
    documents: dict[str, Document] = field(default_factory=dict)

    async def put_many(self, documents: list[Document]) -> list[object]:
        self.documents.update({d.id: d for d in documents})
        return []

    async def delete(self, collection: str, doc_id: str) -> None:
        self.documents.pop(doc_id, None)


def share(bot, room: str, n: int) -> None:
    url = f"mxc://fake.test/notes-{n}"
    bot.account.media[url] = f"Notes number {n}".encode()
    bot.account.say(room, ANN, f"notes-{n}.txt", msgtype="m.file", url=url,
                    info={"mimetype": "text/plain"})  # fmt: skip


async def test_a_burst_of_fifty_files_does_not_hold_up_a_question(tmp_path):
    reader, kept = HeldReader(), KeptDocuments()
    async with running_bot(tmp_path, FILES, files=FileReading(reader, kept)) as bot:
        bot.account.add_room("!r", [ANN, BEN])
        for n in range(50):
            share(bot, "!r", n)
        # Every file is still being read when the question comes: it is answered all the same.
        answer = await bot.reply_to(bot.ask("!r", BEN, "when is the release?"))
        assert "Answer to: when is the release?" in answer.content["body"]
        assert kept.documents == {}
        reader.go.set()

        async def all_kept() -> bool | None:
            return True if len(kept.documents) == 50 else None

        await eventually(all_kept)
        document = next(iter(kept.documents.values()))
        assert document.room == "!r" and document.title.startswith("notes-")
