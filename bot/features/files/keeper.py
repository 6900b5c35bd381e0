"""Files shared in rooms become the room's knowledge (the inbox's KeepFile).

A file is downloaded (decrypted in an encrypted room), its text read in a process of
its own (core/knowledge/parse/extractor.py) and indexed as a document of its room: dated when
it was shared and marked encrypted as its room is, it reaches exactly the readers the
room's history would (see core/rights/readers.py: members, history visibility, the
encryption rule). It is cited as its name, who shared it and when, linked to its
message. A redaction removes it (`forget`), as does the room's retention
(`purge_before`). A file that cannot be read is recorded with why, in one sentence,
for whoever asks about it (`reason_for`).

Images (PNG, JPEG: screenshots, photos of a whiteboard) are read by OCR only when a
question is about them (`until_read` reads one then), and kept the same way; a question
about one carries its text (`image_text`), so that it is searched for what explains it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from dataclasses import replace
from datetime import UTC, datetime

from bot.features.feature import Feature
from bot.features.files.missing import decide_missing_file_reason
from bot.features.files.store import FileStore, RoomFile
from bot.inbox.decisions import KeepFile, SummarizeFile
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.events import IncomingMessage, parse_message
from bot.inbox.links import build_permalink
from bot.inbox.reply import ReplyWriter
from bot.inbox.state import PendingEvent, StateStore
from bot.matrix.account import MatrixAccount
from bot.matrix.types import MatrixError, MediaTooLarge
from bot.settings_holder import SettingsHolder
from core import strings
from core.i18n.dates import format_when
from core.ids import EventID, RoomID
from core.knowledge.documents import Document
from core.knowledge.ingest.indexer import Indexer
from core.knowledge.parse.extraction import Extracted, Unreadable, decide_file_kind, describe_reason
from core.knowledge.parse.extractor import Extractor
from core.knowledge.search.retrieval import build_hit
from core.knowledge.search.vectors import KnowledgeUnavailable
from core.storage.database import StorageError
from core.summaries.draft import SummaryLine
from core.summaries.summarizer import Summarizer

log = logging.getLogger(__name__)

# How often a question about a file being read looks again whether it is read (it may
# be read by another process, so there is no event to wait on).
READ_POLL_SECONDS = 0.1
# At most this much of an image's text goes with a question about it.
IMAGE_TEXT_IN_QUESTION = 2000
IMAGE_PREFIX = "room-image/"


def build_file_document_id(room_id: str, event_id: str, *, image: bool = False) -> str:
    room_key = hashlib.sha256(room_id.encode()).hexdigest()[:16]
    return f"{IMAGE_PREFIX if image else 'room-file/'}{room_key}/{event_id}"


class FileKeeper(Feature):
    def __init__(
        self,
        matrix: MatrixAccount,
        state: StateStore,
        store: FileStore,
        indexer: Indexer,
        extractor: Extractor,
        settings: SettingsHolder,
        summarizer: Summarizer | None = None,
    ) -> None:
        self.matrix = matrix
        self.state = state
        self.store = store
        self.indexer = indexer
        self.extractor = extractor
        self.settings = settings
        self.summarizer = summarizer
        # Download, reading and indexing of one file at a time (`files.at_once`): files
        # are held in memory whole while read.
        self._slots: asyncio.Semaphore | None = None
        self._slots_for = 0
        # Images being read because a question is about them, by event.
        self._images: dict[str, asyncio.Future[None]] = {}

    def register(self, dispatcher: Dispatcher) -> None:
        """The kinds of event this feature handles: files shared, read in the background,
        and the summary of one (a redaction of one is followed with the rest of what the
        bot keeps: see `forget`)."""
        dispatcher.on_work(KeepFile, self.keep, background=True)
        dispatcher.on_command(SummarizeFile, self.summarize_file, asks_model=True)

    async def summarize_file(self, reply: ReplyWriter, decision: SummarizeFile) -> None:
        """`!summarize` or "summarize this" replying to a file the room shared."""
        if not await self.summarize(reply, decision.file_event):
            await reply.finish(strings.FILE_NOT_SUMMARIZED)

    async def keep(
        self, event: PendingEvent, message: IncomingMessage | None, action: KeepFile
    ) -> None:
        """The inbox's KeepFile: read the file and index it as its room's knowledge."""
        collection = self.settings.current.room_files_collection()
        if message is None or message.file is None or collection is None:
            return
        if await self.state.was_redacted(message.event_id):
            return
        await self._keep_now(message, collection)

    async def _keep_now(self, message: IncomingMessage, collection: str) -> None:
        assert message.file is not None
        # Recorded before it waits for a slot: whoever asks about it meanwhile is told it
        # is being read.
        record = RoomFile(
            message.event_id,
            message.room_id,
            message.file.name,
            message.timestamp_ms / 1000,
            "reading",
            "",
            collection,
            "",
        )
        await self.store.store_file(record)
        at_once = self.settings.current.files.at_once
        if self._slots is None or self._slots_for != at_once:
            self._slots, self._slots_for = asyncio.Semaphore(at_once), at_once
        async with self._slots:
            await self._keep(message, record)

    async def _keep(self, message: IncomingMessage, record: RoomFile) -> None:
        assert message.file is not None
        collection = record.collection
        if await self.state.was_redacted(message.event_id):
            await self.store.forget_file(message.event_id)  # its name goes with it
            return
        room = self.matrix.room(message.room_id)
        if self.settings.current.summaries.encrypted_rooms == "room_only" and (
            room is None or room.encrypted
        ):
            # The admins keep encrypted rooms' decrypted text out of the collection.
            await self.store.store_file(
                RoomFile(
                    message.event_id,
                    message.room_id,
                    message.file.name,
                    message.timestamp_ms / 1000,
                    "unreadable",
                    Unreadable("FILE_ENCRYPTED_ROOM_ONLY").encode(),
                    collection,
                    "",
                )
            )
            return
        document = None
        try:
            extracted = await self._read(message)
            document = self._document(message, collection, extracted)
            await self.indexer.put_many([document])
            record = _with(record, state="kept", doc_id=document.id)
            # A text file has no pages: "(0 pages)" read as if nothing was kept.
            pages = f" ({extracted.pages} pages)" if extracted.pages else ""
            log.info("a file shared in %s is kept%s", message.room_id, pages)
        except Unreadable as exc:
            # The reason says nothing of the file's text; its name stays out of the log.
            log.info("a file shared in %s is not kept: %s", message.room_id, exc)
            record = _with(record, state="unreadable", reason=exc.encode())
        except (StorageError, KnowledgeUnavailable):
            raise  # not the file's fault: it stays pending and is read again
        except Exception:
            reference = uuid.uuid4().hex[:8]
            log.exception(
                "a file shared in %s could not be kept (reference %s)", message.room_id, reference
            )
            record = _with(record, state="unreadable", reason=Unreadable("FILE_FAILED").encode())
        await self.store.store_file(record)
        # Checked after the record is written: a redaction marks the message before it
        # removes the file, so one that came while it was read is seen here.
        if await self.state.was_redacted(message.event_id):
            await self.forget(message.room_id, message.event_id)

    async def _read(self, message: IncomingMessage) -> Extracted:
        assert message.file is not None
        shared, limits = message.file, self.settings.current.files
        kind = decide_file_kind(shared.name, shared.media_type)
        if kind is None:
            raise Unreadable("FILE_KIND_UNREAD")
        if shared.size is not None and shared.size > limits.max_bytes:
            raise Unreadable("FILE_TOO_LARGE", size=shared.size, limit=limits.max_bytes)
        try:
            async with asyncio.timeout(limits.timeout_seconds):
                data = await self.matrix.fetch_media(shared.media, limits.max_bytes)
        except MediaTooLarge:  # the event did not say its size, or said less
            raise Unreadable("FILE_DOWNLOAD_TOO_LARGE", limit=limits.max_bytes) from None
        except (MatrixError, TimeoutError) as exc:
            log.warning(
                "a file shared in %s could not be downloaded: %s",
                message.room_id,
                type(exc).__name__ if isinstance(exc, TimeoutError) else exc,
            )
            raise Unreadable("FILE_NOT_DOWNLOADED") from None
        settings = self.settings.current
        languages = (
            settings.room(message.room_id).language,
            settings.language_of(settings.room_files_collection() or ""),
        )
        extracted = await self.extractor.extract(data, kind, tuple(filter(None, languages)))
        most = self.settings.current.knowledge.max_document_bytes
        if len(extracted.content.encode()) > most:
            raise Unreadable("FILE_TEXT_TOO_LARGE", limit=most)
        return extracted

    def _document(
        self, message: IncomingMessage, collection: str, extracted: Extracted
    ) -> Document:
        assert message.file is not None
        room = self.matrix.room(message.room_id)
        shared_at = datetime.fromtimestamp(message.timestamp_ms / 1000, UTC)
        sender = self.matrix.member_name(message.room_id, message.sender) or message.sender
        image = decide_file_kind(message.file.name, message.file.media_type) == "image"
        return Document(
            collection=collection,
            id=build_file_document_id(message.room_id, message.event_id, image=image),
            title=strings.FILE_TITLE.format(
                name=message.file.name, sender=sender, when=format_when(shared_at, "day")
            ),
            content=extracted.content,
            format=extracted.format,
            url=build_permalink(message.room_id, message.event_id, message.sender),
            room=message.room_id,
            date=shared_at.isoformat(),
            # Unknown counts as encrypted: it is then never posted where the server reads.
            encrypted=room.encrypted if room is not None else True,
        )

    async def forget_message(
        self, room_id: RoomID, event_id: EventID, said_at: float | None
    ) -> None:
        await self.forget(room_id, event_id)

    async def purge_room_before(self, room_id: RoomID, cutoff: float) -> None:
        await self.purge_before(room_id, cutoff)

    async def forget(self, room_id: str, event_id: str) -> None:
        """A shared file's message was redacted: the file leaves the knowledge."""
        known = await self.store.room_file(event_id)
        if known is None or known.room != room_id:
            return  # no file, or one of another room (a redaction cannot reach it)
        # The vectors first: when the knowledge is away, the record stays, and the
        # redaction (pending) finds it again.
        if known.doc_id:
            await self.indexer.delete(known.collection, known.doc_id)
        await self.store.forget_file(event_id)

    async def purge_before(self, room_id: str, cutoff: float) -> None:
        """The room's retention: files shared before `cutoff` leave the knowledge."""
        for record in await self.store.files_before(room_id, cutoff):
            await self.forget(room_id, record.event_id)

    async def document_of(self, room_id: str, event_id: str) -> tuple[str, str] | None:
        """The document a kept file of this room became, for a question replying to it."""
        record = await self._record_in(room_id, event_id)
        if record is None or record.state != "kept":
            return None
        return record.collection, record.doc_id

    async def _record_in(self, room_id: str, event_id: str) -> RoomFile | None:
        """The file shared by `event_id` in this room: a reply naming a file of another
        room (a client may send any event id) learns nothing of it."""
        record = await self.store.room_file(event_id)
        return record if record is not None and record.room == room_id else None

    async def _reason_unknown(self, room_id: str, event_id: str) -> str | None:
        """Why a file this room shared, of which the bot keeps no record, is not known
        (see bot/features/files/missing.py); None when the message shares no file."""
        if await self.state.was_redacted(event_id):
            return None  # taken back: nothing to say about it
        source = await self.matrix.fetch_event(room_id, event_id)
        if source is None or source.get("room_id", room_id) != room_id:
            return None
        content = source.get("content")
        kept = self.settings.current.room_files_collection() is not None
        return decide_missing_file_reason(content, kept) if isinstance(content, dict) else None

    async def summarize(self, reply: ReplyWriter, file_event: str) -> bool:
        """A shared file's summary, for `!summarize` or "summarize this" replying to it
        (the model's map-reduce over its passages; without a model, the most telling of
        them); False when `file_event` is no file the bot knows."""
        room_id = reply.message.room_id
        if self.summarizer is None:
            return False
        if await self.state.pending_kind(room_id, file_event) == KeepFile.__name__:
            # Shared a moment ago (or queued behind other files): summarised once read.
            await reply.placeholder()
            await self.until_read(room_id, file_event)
        record = await self._record_in(room_id, file_event)
        if record is None:
            # A file the bot never read says why; a message that shares none is the
            # room's to summarise.
            missing = await self._reason_unknown(room_id, file_event)
            if missing is not None:
                await reply.finish(missing)
            return missing is not None
        reason = await self.reason_for(record.room, file_event)
        if reason is not None:
            await reply.finish(reason)
            return True
        since = reply.audience.own_since() if reply.audience else None
        if since is None or record.sent_at < since:
            # Someone reading the room now joined after it was shared, in a room whose
            # history new members do not see: its summary is not for them.
            await reply.finish(strings.FILE_NOT_FOR_ALL.format(name=record.name))
            return True
        settings = self.settings.current
        lines = await self._passages(record, reply.message.sender)
        result = await self.summarizer.summarize(
            lines,
            strings.FILE_SUMMARY_HEADING.format(name=record.name),
            timezone=settings.room(record.room).timezone,
            part_tokens=settings.summaries.part_tokens,
            extractive_intro=strings.FILE_SUMMARY_EXTRACTIVE,
        )
        await reply.finish(result.markdown)
        return True

    async def _passages(self, record: RoomFile, sender: str) -> list[SummaryLine]:
        catalog = self.indexer.catalog
        document = await catalog.document(record.collection, record.doc_id)
        count = document.chunk_count if document else 0
        rows = await catalog.chunks_at(record.collection, record.doc_id, range(count))
        link = build_permalink(record.room, record.event_id, sender)
        hits = [build_hit(row, False) for row in rows]
        return [
            SummaryLine(number, record.name, hit.text, record.sent_at, link, record.event_id)
            for number, hit in enumerate(sorted(hits, key=lambda h: h.position), start=1)
        ]

    async def until_read(self, room_id: str, event_id: str) -> None:
        """Return once the file this room's `event_id` shared is read (kept or found
        unreadable), or at once when it is no file waiting to be read. Files are read in
        the background, so a question replying to one just shared would otherwise find
        nothing yet. Waits at most twice `[files] timeout_seconds` (its download and its
        reading); a file not read by then is "still being read" (`reason_for`)."""
        await self._read_image_asked_about(room_id, event_id)
        loop = asyncio.get_running_loop()
        until = loop.time() + 2 * self.settings.current.files.timeout_seconds
        while await self.state.pending_kind(room_id, event_id) == KeepFile.__name__:
            if loop.time() >= until:
                return
            await asyncio.sleep(READ_POLL_SECONDS)

    async def _read_image_asked_about(self, room_id: str, event_id: str) -> None:
        """An image of this room that a question is about, read now if it never was: kept
        as a shared file is, or recorded unreadable with why (no text in it, say)."""
        collection = self.settings.current.room_files_collection()
        if collection is None or await self.store.room_file(event_id) is not None:
            return  # files are off, or it is known (of this room or, refused, another)
        reading = self._images.get(event_id)
        if reading is None:
            if await self.state.was_redacted(event_id):
                return
            source = await self.matrix.fetch_event(room_id, event_id)
            if source is None or source.get("room_id", room_id) != room_id:
                return
            message = parse_message(source, RoomID(room_id))
            if (
                message is None
                or message.file is None
                or message.msgtype not in ("m.image", "m.file")
                or decide_file_kind(message.file.name, message.file.media_type) != "image"
            ):
                return
            reading = asyncio.ensure_future(self._keep_now(message, collection))
            self._images[event_id] = reading
            reading.add_done_callback(lambda _: self._images.pop(event_id, None))
        await asyncio.shield(reading)

    async def image_text(self, room_id: str, event_id: str) -> str | None:
        """The text read in an image of this room (kept), for the question about it; None
        for anything else (a PDF's question is answered from it through its passages)."""
        record = await self._record_in(room_id, event_id)
        if record is None or record.state != "kept" or not record.doc_id.startswith(IMAGE_PREFIX):
            return None
        catalog = self.indexer.catalog
        document = await catalog.document(record.collection, record.doc_id)
        count = document.chunk_count if document else 0
        rows = await catalog.chunks_at(record.collection, record.doc_id, range(count))
        hits = sorted((build_hit(row, False) for row in rows), key=lambda h: h.position)
        return "\n".join(hit.text for hit in hits)[:IMAGE_TEXT_IN_QUESTION] or None

    async def reason_for(self, room_id: str, event_id: str) -> str | None:
        """What to tell someone who asks about a file of this room the bot could not read
        (or is still reading); None when it was kept, or is no file the bot knows."""
        record = await self._record_in(room_id, event_id)
        if record is None:
            # An image asked about is read now (when the question could not wait for it).
            await self._read_image_asked_about(room_id, event_id)
            record = await self._record_in(room_id, event_id)
        if record is None:
            return await self._reason_unknown(room_id, event_id)
        if record.state == "kept":
            return None
        if record.state == "reading":
            return strings.FILE_STILL_READING.format(name=record.name)
        return strings.FILE_UNREADABLE.format(
            name=record.name, reason=describe_reason(record.reason)
        )


def _with(record: RoomFile, **changes: str) -> RoomFile:
    return replace(record, **changes)  # type: ignore[arg-type]
