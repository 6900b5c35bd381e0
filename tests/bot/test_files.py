"""Shared files on a fake account: read in the background, never ahead of a question."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace

from bot.features.files.keeper import FileKeeper
from bot.features.files.store import SqlFileStore
from bot.inbox.events import parse_message
from bot.inbox.routing import KeepFile
from bot.inbox.state import PendingEvent, SqlStateStore
from bot.matrix.fake import FakeAccount
from bot.settings_holder import SettingsHolder
from core import strings
from core.config import parse_config
from core.ids import RoomID
from core.knowledge.documents import Document
from core.knowledge.parse.extraction import Extracted, Unreadable
from core.knowledge.search.vectors import KnowledgeUnavailable
from core.storage.sqlite import SqliteDatabase
from tests.bot.harness import CONFIG, FileReading, eventually, running_bot
from tests.bot.scenes import ALICE, ask, posted, reply_to, running_rooms, say

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

    async def extract(self, data: bytes, kind: str, languages: tuple[str, ...] = ()) -> Extracted:
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


def share(bot, room: str, n: int) -> dict:
    url = f"mxc://fake.test/notes-{n}"
    bot.account.media[url] = f"Notes number {n}".encode()
    return bot.account.say(
        room, ANN, f"notes-{n}.txt", msgtype="m.file", url=url, info={"mimetype": "text/plain"}
    )


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


async def keeper_with_a_kept_file(tmp_path, reader, kept):
    """A FileKeeper over SQLite stores and a fake account, and a file it kept."""
    account = FakeAccount()
    account.add_room("!r", [ANN, BEN], encrypted=True)
    db = await SqliteDatabase.open(tmp_path / "state.sqlite3")
    settings = SettingsHolder(
        parse_config(
            CONFIG + FILES, origin="bot.toml", env={"BOT_PASSWORD": "x"}, base_dir=tmp_path
        )
    )
    keeper = FileKeeper(
        account, await SqlStateStore.open(db), await SqlFileStore.open(db), kept, reader, settings
    )
    account.media["mxc://fake.test/a"] = b"The budget is 42,000 euros."
    source = account.say("!r", ANN, "budget.txt", msgtype="m.file", url="mxc://fake.test/a")
    message = parse_message(source, RoomID("!r"))
    assert message is not None
    reader.go.set()
    await keeper.keep(PendingEvent("!r", source), message, KeepFile("budget.txt"))
    return keeper, db, message


async def test_a_kept_file_is_its_rooms_encrypted_document_until_the_rooms_retention(tmp_path):
    reader, kept = HeldReader(), KeptDocuments()
    keeper, db, message = await keeper_with_a_kept_file(tmp_path, reader, kept)
    try:
        [document] = kept.documents.values()
        assert (document.room, document.encrypted) == ("!r", True)
        assert await keeper.document_of("!r", message.event_id) == ("room-files", document.id)
        await keeper.purge_before("!r", message.timestamp_ms / 1000)  # kept: said at the cutoff
        assert kept.documents
        await keeper.purge_before("!r", message.timestamp_ms / 1000 + 1)
        assert kept.documents == {} and await keeper.document_of("!r", message.event_id) is None
    finally:
        await db.close()


async def test_a_redacted_file_leaves_the_knowledge(tmp_path):
    reader, kept = HeldReader(), KeptDocuments()
    keeper, db, message = await keeper_with_a_kept_file(tmp_path, reader, kept)
    try:
        # Ann took it back: the homeserver keeps the event without its content.
        await keeper.matrix.redact("!r", message.event_id, "")
        await keeper.forget("!r", message.event_id)
        assert kept.documents == {} and await keeper.reason_for("!r", message.event_id) is None
    finally:
        await db.close()


async def test_a_reply_from_another_room_learns_nothing_of_a_file(tmp_path):
    """A client may name any event id in a reply: a file of another room is no file there."""
    reader, kept = HeldReader(), KeptDocuments()
    keeper, db, message = await keeper_with_a_kept_file(tmp_path, reader, kept)
    try:
        assert await keeper.document_of("!other", message.event_id) is None
        assert await keeper.reason_for("!other", message.event_id) is None
        await keeper.forget("!other", message.event_id)
        assert kept.documents, "a redaction in another room cannot remove it"
    finally:
        await db.close()


@dataclass
class DownOnce(KeptDocuments):
    """Chroma away the first time a file is indexed."""

    failed: bool = False

    async def put_many(self, documents: list[Document]) -> list[object]:
        if not self.failed:
            self.failed = True
            raise KnowledgeUnavailable("Chroma is restarting")
        return await super().put_many(documents)


async def test_a_file_read_during_an_outage_is_kept_once_it_is_over(tmp_path):
    reader, kept = HeldReader(), DownOnce()
    reader.go.set()
    async with running_bot(tmp_path, FILES, files=FileReading(reader, kept)) as bot:
        bot.dispatcher.background_retry_seconds = 0.05
        bot.account.add_room("!r", [ANN, BEN])
        share(bot, "!r", 1)

        async def kept_once() -> bool | None:
            return True if kept.documents else None

        await eventually(kept_once)
        assert kept.failed and len(kept.documents) == 1


async def test_files_of_encrypted_rooms_stay_out_when_the_admins_keep_their_text_out(tmp_path):
    reader, kept = HeldReader(), KeptDocuments()
    reader.go.set()
    config = FILES + '[summaries]\nencrypted_rooms = "room_only"\n'
    async with running_bot(tmp_path, config, files=FileReading(reader, kept)) as bot:
        bot.account.add_room("!sealed", [ANN, BEN], encrypted=True)
        bot.account.add_room("!open", [ANN, BEN])
        share(bot, "!open", 1)
        sealed = bot.account.say(
            "!sealed",
            ANN,
            "secret.txt",
            msgtype="m.file",
            url="mxc://fake.test/notes-1",
            info={"mimetype": "text/plain"},
        )

        async def both_done() -> bool | None:
            return True if kept.documents and not await bot.state.pending_events() else None

        await eventually(both_done)
        assert [d.room for d in kept.documents.values()] == ["!open"]
        answer = await bot.reply_to(
            bot.ask(
                "!sealed",
                BEN,
                "what is in it?",
                **{"m.relates_to": {"m.in_reply_to": {"event_id": sealed["event_id"]}}},
            )
        )
        assert "keep the text of encrypted rooms out of the knowledge" in answer.content["body"]


async def test_a_question_about_a_file_still_being_read_is_answered_from_it_once_read(tmp_path):
    """Files are read in the background: a question replying to one that is not read yet
    waits for its reading (showing the placeholder), then is answered with it in focus."""
    reader, kept = HeldReader(), KeptDocuments()
    config = FILES + "[bot]\nplaceholder_after_seconds = 0.05\n"
    async with running_bot(tmp_path, config, files=FileReading(reader, kept)) as bot:
        bot.account.add_room("!r", [ANN, BEN])
        shared = share(bot, "!r", 1)
        question = bot.ask(
            "!r",
            BEN,
            "what do the notes say?",
            **{"m.relates_to": {"m.in_reply_to": {"event_id": shared["event_id"]}}},
        )

        async def placeholder_shown() -> bool | None:
            return True if bot.account.messages() else None

        await eventually(placeholder_shown)
        assert kept.documents == {}, "the reading is still held"
        reader.go.set()
        answer = await bot.reply_to(question)
        assert answer.content["body"].endswith("Answer to: what do the notes say?")
        [document] = kept.documents.values()
        assert bot.answerer.requests[-1].focus == ("room-files", document.id)


@dataclass
class SecondUnreadable(HeldReader):
    """Reads the first file; the second turns out unreadable."""

    async def extract(self, data: bytes, kind: str, languages: tuple[str, ...] = ()) -> Extracted:
        extracted = await super().extract(data, kind)
        if b"number 2" in data:
            raise Unreadable("FILE_FAILED")
        return extracted


async def test_summarize_this_on_a_file_queued_behind_another_is_about_that_file(tmp_path):
    """Files are read one at a time: "!summarize" replying to one still queued waits for
    it (with the placeholder), and is about the file (here: why it could not be read),
    not a summary of the room."""
    reader, kept = SecondUnreadable(), KeptDocuments()
    async with running_bot(tmp_path, FILES, files=FileReading(reader, kept), rooms=True) as bot:
        bot.account.add_room("!r", [ANN, BEN])
        share(bot, "!r", 1)
        queued = share(bot, "!r", 2)
        asked = bot.ask(
            "!r",
            BEN,
            "!summarize",
            **{"m.relates_to": {"m.in_reply_to": {"event_id": queued["event_id"]}}},
        )

        async def placeholder_shown() -> bool | None:
            return True if bot.account.messages() else None

        await eventually(placeholder_shown)
        reader.go.set()
        summary = await bot.reply_to(asked)
        body = summary.content.get("m.new_content", summary.content)["body"]
        assert body.startswith("I could not read “notes-2.txt”"), body


async def test_questions_waiting_for_a_file_hold_half_the_answer_workers_at_most(tmp_path):
    """One long reading must not hold every worker: beyond half of them, a question about
    a file still being read is told so at once, and other rooms go on being answered."""
    reader, kept = HeldReader(), KeptDocuments()
    config = FILES + "[bot]\nanswer_workers = 2\nplaceholder_after_seconds = 0.05\n"
    async with running_bot(tmp_path, config, files=FileReading(reader, kept)) as bot:
        bot.account.add_room("!r", [ANN, BEN])
        shared = share(bot, "!r", 1)
        about = {"m.relates_to": {"m.in_reply_to": {"event_id": shared["event_id"]}}}
        waiting = bot.ask("!r", BEN, "what do the notes say?", **about)

        async def placeholder_shown() -> bool | None:
            return True if bot.account.messages() else None

        await eventually(placeholder_shown)
        told = await bot.reply_to(bot.ask("!r", ANN, "and the notes?", **about))
        assert told.content["body"] == strings.FILE_STILL_READING.format(name="notes-1.txt")
        reader.go.set()
        answered = await bot.reply_to(waiting)
        assert answered.content.get("m.new_content", answered.content)["body"].endswith(
            "Answer to: what do the notes say?"
        )


@dataclass
class CatalogedDocuments(KeptDocuments):
    """Kept documents whose text is one passage each in the catalog that a file's summary
    reads (a row as core/knowledge/search/catalog.py gives it, HIT_COLUMNS)."""

    @property
    def catalog(self) -> CatalogedDocuments:
        return self

    async def document(self, collection: str, doc_id: str) -> SimpleNamespace | None:
        return SimpleNamespace(chunk_count=1) if doc_id in self.documents else None

    async def chunks_at(self, collection: str, doc_id: str, positions: object) -> list[tuple]:
        d = self.documents[doc_id]
        text = (d.title, d.url, "", d.content)  # title, url, heading, text
        return [(f"{doc_id}:0", collection, doc_id, "matrix", *text, 0, None, d.room, 1, None)]


def share_pdf(bot, room: str, n: int, text: str) -> str:
    """alice shares `text` as travel-policy.pdf (the n-th upload)."""
    url = f"mxc://fake.test/pdf-{n}"
    bot.account.media[url] = text.encode()
    return say(
        bot,
        room,
        ALICE,
        "travel-policy.pdf",
        msgtype="m.file",
        url=url,
        filename="travel-policy.pdf",
        info={"mimetype": "application/pdf"},
    )


async def test_a_file_the_bot_never_read_says_why_and_summarize_this_needs_no_mention(tmp_path):
    """Issue 48: a question replying to a PDF got "I found nothing about this" when files
    were off, and again for a file shared before they were turned on; "summarize this"
    as a plain reply to a file was ignored."""
    reader, kept = HeldReader(), CatalogedDocuments()
    reader.go.set()
    policy = "Hotels. A night costs at most 140 euros in Paris."
    question = "how much may a hotel night cost in Paris?"
    async with running_rooms(tmp_path, files=FileReading(reader, kept)) as bot:
        bot.account.add_room("!r", [ALICE])
        early = share_pdf(bot, "!r", 1, policy)
        not_kept = strings.FILE_NOT_KEPT_HERE.format(name="travel-policy.pdf")
        assert (await ask(bot, "!r", ALICE, question, reply_to=early))["body"] == not_kept
        plain = say(bot, "!r", ALICE, "summarize this", reply_to=early)
        assert (await reply_to(bot, plain))["body"] == not_kept

        # An admin turns files on while the bot runs.
        bot.settings.current = parse_config(
            CONFIG + FILES, origin="bot.toml", env={"BOT_PASSWORD": "x"}, base_dir=tmp_path
        )
        answer = await ask(bot, "!r", ALICE, question, reply_to=early)
        assert answer["body"] == strings.FILE_SHARED_EARLIER.format(name="travel-policy.pdf")

        again = share_pdf(bot, "!r", 2, policy)
        answer = await ask(bot, "!r", ALICE, question, reply_to=again)
        assert answer["body"].endswith(f"Answer to: {question}"), answer["body"]
        [document] = kept.documents.values()
        assert policy in document.content
        assert bot.answerer.requests[-1].focus == ("room-files", document.id), "from the file"
        plain = say(bot, "!r", ALICE, "summarize this", reply_to=again)
        summary = (await reply_to(bot, plain))["body"]
        assert summary.startswith("Summary of “travel-policy.pdf”"), summary
        assert "140 euros" in summary, "its passages, in their own words"
        # Introduced as the file's passages, not as a discussion's messages.
        assert strings.FILE_SUMMARY_EXTRACTIVE in summary, summary
        assert strings.SUMMARY_EXTRACTIVE not in summary, summary
        # A plain reply to someone's text is theirs, not the bot's: the sentinel comes first.
        said = say(bot, "!r", ALICE, "Lunch at noon?")
        say(bot, "!r", ALICE, "summarize this", reply_to=said)
        await ask(bot, "!r", ALICE, "what is the hotel limit in Paris?")
        summaries = [w for w in posted(bot, "!r") if "Summary" in str(w.content)]
        assert len(summaries) == 1, "only the file's summary"
