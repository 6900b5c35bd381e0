"""Room summaries: `!summarize` on demand, and the scheduled runs that write summaries
into the knowledge collection."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from urllib.parse import quote
from zoneinfo import ZoneInfo

from bot.features.feature import Feature, FollowedEdit
from bot.features.summaries.lines import LineReader
from bot.inbox.audience import Audiences
from bot.inbox.decisions import Ledger, Summarize
from bot.inbox.dispatcher import Dispatcher, Spawn
from bot.inbox.render import build_room_notice
from bot.inbox.reply import ReplyWriter
from bot.matrix.account import MatrixAccount, build_shown_names
from bot.settings_holder import SettingsHolder
from core import strings
from core.i18n.language import speaking
from core.ids import EventID, RoomID
from core.knowledge.documents import Document
from core.knowledge.ingest.indexer import Indexer
from core.ledger.entries import build_dated_entry, decide_listed
from core.ledger.store import LedgerStore
from core.ledger.text import Asked, build_ledger_text
from core.metrics import Metrics
from core.storage.database import StorageError
from core.summaries.draft import SummaryLine
from core.summaries.ledger_entries import LedgerEntry
from core.summaries.ranges import (
    SUMMARY_ID_PREFIX,
    SummaryRange,
    build_heading,
    build_nothing_text,
    build_summary_document,
    decide_summary_range,
    parse_summary_range,
)
from core.summaries.store import SummaryMarks
from core.summaries.summarizer import Summarizer, SummaryResult
from core.timerange import TimeExpressionFinder, TimeRange

log = logging.getLogger(__name__)
MAX_REDACTED = 10_000
# A summary is made again at most this many times when messages it read were redacted
# while it was being made.
MAX_REMAKES = 3


class SummaryDesk(Feature):
    def __init__(
        self,
        matrix: MatrixAccount,
        summarizer: Summarizer,
        marks: SummaryMarks,
        settings: SettingsHolder,
        indexer: Indexer | None,
        times: TimeExpressionFinder,
        metrics: Metrics | None,
        audiences: Audiences,
        ledger: LedgerStore,
        lines: LineReader | None = None,
    ) -> None:
        self.ledger = ledger
        # Runs work the dispatcher's shutdown waits for (set when registered).
        self._spawn: Spawn = asyncio.ensure_future
        # The rooms' lines: the store's and the homeserver's (or only the homeserver's).
        self.lines = lines or LineReader(matrix, settings)
        # Messages redacted lately, per room: a summary that read one while it was being
        # made is made again (it would store the redacted text after its redaction).
        self._redacted: dict[str, set[str]] = {}
        self.matrix = matrix
        self.summarizer = summarizer
        self.marks = marks
        self.settings = settings
        self.indexer = indexer
        self.times = times
        self.metrics = metrics
        self.audiences = audiences
        # The rooms a room replaced (bot/features/upgrades), newest first; and whether a
        # room was replaced by another.
        self.predecessors: Callable[[str], tuple[RoomID, ...]] = lambda room: ()
        self.replaced: Callable[[str], bool] = lambda room: False

    def register(self, dispatcher: Dispatcher) -> None:
        """The commands this feature runs: `!summarize` (it asks the model) and the
        ledger's `!decisions` and `!actions`."""
        dispatcher.on_command(Summarize, self.summarize, asks_model=True)
        dispatcher.on_command(Ledger, self.ledger_command)
        self._spawn = dispatcher.spawn

    async def follow_edit(self, edit: FollowedEdit) -> None:
        """The ledger's entries made from a message its sender edited read its new text."""
        if await edit.by_author():
            await self.ledger.follow_edit(edit.room_id, edit.original, edit.text, edit.edit_event)

    async def forget_message(
        self, room_id: RoomID, event_id: EventID, said_at: float | None
    ) -> None:
        """A redacted message leaves the ledger, and the summaries that quote it or cover
        when it was said are removed and made again without it (in the background:
        summarising reads the homeserver and the model)."""
        try:
            await self.ledger.forget_event(room_id, event_id)
        except StorageError:
            raise
        except Exception:
            log.exception("the ledger entries of a redacted message of %s stay", room_id)
        self.note_redaction(room_id, event_id)
        try:
            removed = await self.forget_quoting(room_id, event_id, said_at)
        except StorageError:
            raise
        except Exception:
            log.exception("the summaries quoting a redacted message of %s stay", room_id)
            return
        if removed:
            self._spawn(self._rebuild_logged(room_id, removed))

    async def erase_freed(self) -> None:
        await self.ledger.erase_freed()
        if self.indexer is not None:
            await self.indexer.catalog.erase_freed()

    async def purge_room_before(self, room_id: RoomID, cutoff: float) -> None:
        await self.purge_before(room_id, cutoff)

    async def _rebuild_logged(self, room_id: str, doc_ids: list[str]) -> None:
        try:
            await self.rebuild(room_id, doc_ids)
        except Exception:
            # The summaries are gone already; a later scheduled run covers new messages.
            log.exception("summaries of %s could not be made again", room_id)

    async def summarize(self, reply: ReplyWriter, action: Summarize) -> None:
        """!summarize [time]: this room since the last summary, or this thread."""
        settings = self.settings.current
        message = reply.message
        timezone = settings.room(message.room_id).timezone
        now = datetime.now(ZoneInfo(timezone))
        found = await asyncio.to_thread(self._read_time, action.request, now)
        thread = message.thread_root
        last = await self.marks.last_summary(message.room_id)
        covered = decide_summary_range(
            action.request,
            now=now,
            found=found,
            last_summary=last,
            default_hours=settings.summaries.default_hours,
            in_thread=thread is not None,
        )
        if covered is None:
            text = strings.SUMMARY_RANGE_UNREADABLE.format(
                args=action.request, prefix=settings.bot.command_prefix
            )
            await reply.finish(text)
            return

        async def notice(count: int, parts: int) -> None:
            await reply.finish(strings.SUMMARY_PROGRESS.format(count=count, parts=parts))

        # Only what every reader of the room could read said there (history visibility).
        since = reply.audience.own_since() if reply.audience else None
        if since is None or since >= covered.end:
            await reply.finish(build_nothing_text(covered, timezone, thread=thread is not None))
            return
        covered = SummaryRange(max(covered.start, since), covered.end)
        unreadable: list[float] = []
        made = await self._summarize(message.room_id, covered, thread, notice, unreadable)
        # Messages it could not decrypt are named, not summarised as if the gap were all.
        missing = "\n\n" + strings.UNREADABLE_MESSAGES.format(count=len(unreadable))
        if made is None:
            text = build_nothing_text(covered, timezone, thread=thread is not None)
            await reply.finish(text + (missing if unreadable else ""))
            return
        # Marked before it is shown, so a !summarize asked as soon as it is read starts
        # after it; given back if it cannot be posted (the next one covers its range).
        if thread is None:
            await self.marks.note_summary(message.room_id, covered.end)
        try:
            await reply.finish(made[0].markdown + (missing if unreadable else ""))
        except BaseException:
            if thread is None:
                await self.marks.give_back_summary(message.room_id, covered.end, last)
            raise
        self._count("on_demand")

    def _readable_since(self, room_id: str, start: float) -> bool:
        """Whether everyone who reads the room now could read it from `start` on."""
        since = self.audiences.own_since(room_id)
        if since is None or since > start:
            log.info("the summary of %s is not posted: some readers joined since", room_id)
            return False
        return True

    def _count(self, trigger: str) -> None:
        if self.metrics is not None:
            self.metrics.summaries.labels(trigger).inc()

    def _read_time(self, args: str, now: datetime) -> TimeRange | None:
        return self.times.read_range(args, now) if args.strip() else None

    async def _summarize(
        self,
        room_id: str,
        covered: SummaryRange,
        thread: str | None,
        notice=None,
        unreadable: list[float] | None = None,
    ) -> tuple[SummaryResult, list[SummaryLine]] | None:
        """The summary of the range and its lines, its ledger entries kept; made again
        when a message it read was redacted meanwhile (it must not outlive that)."""
        for _ in range(MAX_REMAKES):
            if unreadable is not None:
                unreadable.clear()  # counted again with the range read again
            made = await self._summarize_once(room_id, covered, thread, notice, unreadable)
            redacted = self._redacted.get(room_id, set())
            if made is None or not any(line.event_id in redacted for line in made[1]):
                break
        else:
            return None
        if made is not None:
            zone = ZoneInfo(self.settings.current.room(room_id).timezone)
            dated = [build_dated_entry(entry, zone) for entry in made[0].entries]
            await self.ledger.add_entries(room_id, [(entry, entry.due_ts) for entry in dated])
        return made

    async def _summarize_once(
        self,
        room_id: str,
        covered: SummaryRange,
        thread: str | None,
        notice=None,
        unreadable: list[float] | None = None,
    ) -> tuple[SummaryResult, list[SummaryLine]] | None:
        settings = self.settings.current
        lines = await self.lines.read(
            room_id, covered.start, covered.end, thread_root=thread, unreadable=unreadable
        )
        if not lines:
            return None
        timezone = settings.room(room_id).timezone
        heading = build_heading(
            lines[0].ts, lines[-1].ts, len(lines), timezone, thread=thread is not None
        )
        started = time.perf_counter()
        # People as the room shows them, as the catch-up does; the lines keep their ids
        # for what follows.
        names = build_shown_names(self.matrix, room_id, (line.sender for line in lines))
        shown = [replace(line, sender=names[line.sender]) for line in lines]
        result = await self.summarizer.summarize(
            shown,
            heading,
            timezone=timezone,
            part_tokens=settings.summaries.part_tokens,
            notice=notice,
        )
        log.info(
            "summarised %d messages of %s in %d model calls (%.1f s)",
            len(lines),
            room_id,
            result.calls,
            time.perf_counter() - started,
        )
        return result, lines

    async def ledger_command(self, reply: ReplyWriter, action: Ledger) -> None:
        """!decisions [words], !actions [mine|open] [words]: the room's ledger, of what
        every reader of the room could read said there."""
        settings = self.settings.current
        message = reply.message
        since = reply.audience.own_since() if reply.audience else None
        words = action.request.split()
        mine = open_only = False
        kind = action.entries
        if kind == "action" and words and words[0].lower() in ("mine", "open"):
            mine, open_only = words[0].lower() == "mine", words[0].lower() == "open"
            words = words[1:]
        timezone = settings.room(message.room_id).timezone
        entries: list[LedgerEntry] = []
        # The room's, and the rooms' it replaced (upgrades) as far as its readers may.
        audience = reply.audience
        knowledge = dict(audience.knowledge) if audience else {}
        # Never an encrypted room's where this one is not (the homeserver would read it).
        closed = set(audience.plaintext_only) if audience else set()
        rooms = [(message.room_id, since)] + [
            (old, knowledge.get(old))
            for old in self.predecessors(message.room_id)
            if old not in closed
        ]
        for room, room_since in rooms:
            if room_since is None:  # nothing said there may be shown to all readers here
                continue
            found = await self.ledger.entries(room, kind, since=room_since)
            entries += [build_dated_entry(entry, ZoneInfo(timezone)) for entry in found]
        entries.sort(key=lambda entry: entry.ts)
        names = (
            message.sender,
            self.matrix.member_name(message.room_id, message.sender),
            message.sender.split(":")[0].lstrip("@"),
        )
        listed = decide_listed(
            entries,
            " ".join(words),
            mine=[n for n in names if n] if mine else (),
            due_after=time.time() if open_only else -math.inf,
        )
        asked: Asked = "words" if words else "mine" if mine else "open" if open_only else ""
        await reply.finish(
            build_ledger_text(
                listed, kind, timezone, settings.bot.command_prefix, total=len(entries), asked=asked
            )
        )

    def note_redaction(self, room_id: str, event_id: str) -> None:
        redacted = self._redacted.setdefault(room_id, set())
        if len(redacted) >= MAX_REDACTED:
            redacted.clear()  # only summaries in flight need them
        redacted.add(event_id)

    async def forget_quoting(
        self, room_id: str, event_id: str, said: float | None = None
    ) -> list[str]:
        """A message (sent at `said`, when known) was redacted: the room's scheduled
        summaries that link to it, or cover the time it was sent (a model may have said
        it in its own words without a link), leave the collection at once, so that no
        answer quotes it; returns their ids, for `rebuild`."""
        settings = self.settings.current
        collection = settings.summaries.collection
        if self.indexer is None or collection is None:
            return []
        catalog = self.indexer.catalog
        found = await catalog.documents_quoting(collection, room_id, quote(event_id, safe=""))
        if said is not None:
            found += [
                doc_id
                for doc_id in await catalog.room_documents_covering(collection, room_id, said)
                if doc_id not in found
            ]
        # Only summaries: a file shared in the room (bot/features/files) shares the
        # collection, and is removed with its own message only.
        found = [doc_id for doc_id in found if doc_id.startswith(SUMMARY_ID_PREFIX)]
        for doc_id in found:
            await self.indexer.delete(collection, doc_id)
        return found

    async def purge_before(self, room_id: str, cutoff: float) -> None:
        """The room's retention: its summaries that end before `cutoff` leave the
        collection, and the ledger forgets what was said before it."""
        await self.ledger.purge_before(room_id, cutoff)
        collection = self.settings.current.summaries.collection
        if self.indexer is None or collection is None:
            return
        for doc_id in await self.indexer.catalog.room_documents_before(collection, room_id, cutoff):
            await self.indexer.delete(collection, doc_id)

    async def rebuild(self, room_id: str, doc_ids: list[str]) -> None:
        """Summarise the periods of removed summaries again, from the messages as they
        are now; a period with nothing left stays without a summary."""
        collection = self._collection_for(room_id)
        if self.indexer is None or collection is None:
            return
        for doc_id in doc_ids:
            covered = parse_summary_range(doc_id)
            if covered is None:
                continue
            made = await self._summarize(room_id, covered, None)
            if made is None:
                continue
            await self.indexer.put_many([self._document(collection, room_id, covered, *made)])

    def _document(
        self,
        collection: str,
        room_id: str,
        covered: SummaryRange,
        result: SummaryResult,
        lines: list[SummaryLine],
    ) -> Document:
        """The summary as knowledge of its room, dated from its first message (not from
        the start of the period asked for, which may be before anyone now in the room
        joined: they could not get it)."""
        return build_summary_document(
            collection,
            room_id,
            self.matrix.room_name(room_id),
            SummaryRange(max(covered.start, lines[0].ts), covered.end),
            result.markdown,
            first_link=lines[0].link,
            encrypted=self._encrypted(room_id),
        )

    def _encrypted(self, room_id: str) -> bool:
        """Whether the room is encrypted; a room the bot no longer sees counts as one."""
        room = self.matrix.room(room_id)
        return room is None or room.encrypted

    def _collection_for(self, room_id: str) -> str | None:
        """Where the room's scheduled summaries go as knowledge; None: nowhere."""
        summaries = self.settings.current.summaries
        if summaries.encrypted_rooms == "room_only" and self._encrypted(room_id):
            return None
        return summaries.collection

    async def run_scheduled(self, room_id: str) -> None:
        """One scheduled run: what is new since the last run, into the knowledge
        collection (and the room, if configured); nothing new, nothing written. Written
        in the room's language (the scheduler has no asker to detect one of)."""
        with speaking(self.settings.current.room(room_id).language):
            await self._run_scheduled(room_id)

    async def _run_scheduled(self, room_id: str) -> None:
        settings = self.settings.current
        if self.indexer is None or settings.summaries.collection is None:
            return
        old = await self.marks.last_scheduled(room_id) or 0.0
        now = time.time()
        if not await self.marks.claim(room_id, old, now):
            log.info("the summary of %s is being made by another run", room_id)
            return
        start = old or now - settings.summaries.default_hours * 3600
        covered = SummaryRange(start, now)
        try:
            made = await self._summarize(room_id, covered, None)
            if made is None:
                return
            result, lines = made
            collection = self._collection_for(room_id)
            if collection is not None:
                await self.indexer.put_many([self._document(collection, room_id, covered, *made)])
            self._count("scheduled")
            await self.marks.note_summary(room_id, now)
            # Readable from its first message on: the period before it holds nothing.
            first = max(covered.start, lines[0].ts)
            # An upgraded room's last messages still become knowledge (its successor's
            # readers reach them); nothing is posted there any more.
            posted = settings.summaries.post_in_room and not self.replaced(room_id)
            if posted and self._readable_since(room_id, first):
                await self.matrix.send(room_id, build_room_notice(result.markdown))
        except BaseException:
            await self.marks.claim(room_id, now, old)  # give the range back to the next run
            raise
