"""Summaries and catch-ups read a room's lines from the bot's own store (the lines the
conversation keeps, on SQLite) for the time its span covers, and from the homeserver (a
FakeAccount) only before it: the same lines `fetch_lines` reads, once each, in order."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.features.answers.conversation import SEEN_MARGIN_SECONDS, Conversation
from bot.features.summaries.history import PEEK, fetch_lines
from bot.features.summaries.lines import TOKEN_MARGIN_MS, LineReader, build_summary_lines
from bot.inbox.events import IncomingMessage, parse_message
from bot.inbox.mentions import BotIdentity
from bot.matrix.fake import FakeAccount
from bot.settings_holder import SettingsHolder
from core.config import parse_config
from core.history.line_store import RoomLine
from core.history.spans import after
from core.ids import RoomID, UserID
from core.knowledge.search.embedding import Embedders
from core.knowledge.search.vectors import VectorStore
from core.memory.history import HistoryIndex
from core.memory.memory import ConversationMemory
from core.memory.store import SqlMemoryStore
from core.storage.sqlite import SqliteDatabase
from core.summaries.draft import SummaryLine
from tests.bot.harness import BOT, CONFIG

ROOM, ANN, BOB = "!room:fake.test", "@ann:fake.test", "@bob:fake.test"
T0 = 1_790_000_000_000  # ms
END = T0 / 1000 + 3600
# No window is embedded below 100 lines: Chroma (away here) and the model are never asked.
MEMORY = "\n[memory]\nwindow_lines = 100\n"
IDENTITY = BotIdentity(UserID(BOT), "Knowledge Bot")


@dataclass
class Reading:
    account: FakeAccount
    conversation: Conversation
    memory: ConversationMemory
    store: SqlMemoryStore
    reader: LineReader
    keeping: asyncio.Task[None] | None = None
    not_before_ms: int = 0
    # When the last sync was asked: everything said before was seen (time.time()).
    synced_at: float | None = END + 60

    async def say(
        self,
        n: int,
        body: str,
        sender: str = ANN,
        *,
        addressed: bool = False,
        seen: bool = True,
        **content: Any,
    ) -> IncomingMessage:
        """A message at T0 + n seconds, in the room; `seen`: by the sync (the
        conversation), else sent before the bot kept lines."""
        source = self.account.add_event(
            ROOM,
            sender,
            "m.room.message",
            {"msgtype": "m.text", "body": body, **content},
            origin_server_ts=T0 + n * 1000,
        )
        message = parse_message(source, RoomID(ROOM))
        assert message is not None
        if seen:
            await self.conversation.observe(message, addressed)
        return message

    async def read(self, start: float, thread_root: str | None = None) -> list[SummaryLine]:
        if self.synced_at is not None:
            self.conversation.note_synced(self.synced_at)
        await self.conversation.settled()
        self.account.message_reads.clear()
        self.account.token_asks.clear()
        return await self.reader.read(ROOM, start, END, thread_root=thread_root)


@contextlib.asynccontextmanager
async def reading(tmp_path: Path, config: str = "") -> AsyncIterator[Reading]:
    """The conversation keeping lines into a memory store on SQLite, and the reader."""
    account = FakeAccount(BOT)
    account.add_room(ROOM, [ANN, BOB])
    settings = SettingsHolder(
        parse_config(
            CONFIG + MEMORY + config,
            origin="bot.toml",
            env={"BOT_PASSWORD": "x"},
            base_dir=tmp_path,
        )
    )
    db = await SqliteDatabase.open(tmp_path / "memory.sqlite3")
    store = await SqlMemoryStore.open(db)
    away = VectorStore("http://127.0.0.1:1", tmp_path)
    history = HistoryIndex(store, away, Embedders(), lambda: settings.current)
    memory = ConversationMemory(store, history, lambda: settings.current)

    async def not_before_ms(room_id: str) -> int:
        return state.not_before_ms

    conversation = Conversation(IDENTITY, settings, memory, not_before_ms)
    reader = LineReader(account, settings, memory, bot=IDENTITY)
    reader.held = conversation
    state = Reading(account, conversation, memory, store, reader)
    state.keeping = keeping = asyncio.create_task(conversation.keep_history())
    try:
        yield state
    finally:
        keeping.cancel()
        await asyncio.gather(keeping, return_exceptions=True)
        await db.close()


async def chat(room: Reading, first: int = 0, *, seen: bool = True) -> list[IncomingMessage]:
    """People talking, with everything a summary leaves out among them (a question to
    the bot too: no part of the room's discussion)."""
    said = [await room.say(first, "we ship on Friday", seen=seen)]
    await room.say(first, "an answer of the bot's", BOT, seen=seen)
    await room.say(first + 1, "Knowledge Bot: who writes the notes?", addressed=True, seen=seen)
    await room.say(first + 2, "!summarize", seen=seen)
    await room.say(first + 3, "a notice", seen=seen, msgtype="m.notice")
    said.append(
        await room.say(
            first + 4,
            "> <@ann:fake.test> we ship on Friday\n\nagreed",
            BOB,
            seen=seen,
            **{
                "m.mentions": {"user_ids": [ANN]},
                "m.relates_to": {"m.in_reply_to": {"event_id": said[0].event_id}},
            },
        )
    )
    said.append(await room.say(first + 5, "waves", BOB, seen=seen, msgtype="m.emote"))
    return said


async def test_a_range_the_store_holds_is_read_from_it_alone_as_the_homeserver_would(tmp_path):
    async with reading(tmp_path) as room:
        said = await chat(room)
        start = after(T0 / 1000)  # the span starts just after the first line kept
        lines = await room.read(start)
        assert room.account.message_reads == [] and room.account.token_asks == [], (
            "the homeserver is not asked"
        )
        assert [line.event_id for line in lines] == [m.event_id for m in said[1:]]
        assert lines[0].text == "agreed" and lines[0].mentions == (ANN,), "no reply fallback"
        assert lines[0].reply_to == said[0].event_id
        from_homeserver = await fetch_lines(room.account, ROOM, start, END, bot=IDENTITY)
        assert lines == from_homeserver


async def test_the_part_before_the_span_comes_from_the_homeserver_and_joins_once(tmp_path):
    async with reading(tmp_path) as room:
        before = await chat(room, 0, seen=False)  # said before lines were kept
        kept = [*await chat(room, 10), *await chat(room, 40)]
        lines = await room.read(0.0)
        assert [line.event_id for line in lines] == [m.event_id for m in [*before, *kept]]
        assert [line.number for line in lines] == list(range(1, 10))
        assert lines == await fetch_lines(room.account, ROOM, 0.0, END, bot=IDENTITY)
        # From a little after the span's start (the order the homeserver stored the room
        # in is not quite the order of times), not from the newest message.
        assert room.account.token_asks == [(ROOM, T0 + 10_001 + TOKEN_MARGIN_MS)]
        assert room.account.message_reads[0][1] is not None


async def test_questions_to_the_bot_and_its_threads_are_left_out_as_from_the_homeserver(
    tmp_path,
):
    async with reading(tmp_path) as room:
        await room.say(0, "before")
        talk = await room.say(1, "do we need a freeze on Thursday evening?")
        asked = await room.say(2, "Knowledge Bot: where is the VPN gateway?", addressed=True)
        in_thread = {"m.relates_to": {"rel_type": "m.thread", "event_id": asked.event_id}}
        answer = await room.say(3, "vpn2.example.org [1]", BOT, **in_thread)
        await room.say(4, "and the old one?", BOB, addressed=True, **in_thread)
        reply = {"m.relates_to": {"m.in_reply_to": {"event_id": answer.event_id}}}
        await room.say(5, "thanks", BOB, addressed=True, **reply)
        start = after(T0 / 1000)
        lines = await room.read(start)
        assert [line.event_id for line in lines] == [talk.event_id]
        from_homeserver = await fetch_lines(room.account, ROOM, start, END, bot=IDENTITY)
        assert from_homeserver == lines, "the same decision for lines read back"


async def test_a_thread_is_read_from_the_store_with_its_root(tmp_path):
    async with reading(tmp_path) as room:
        await room.say(0, "before")
        root = await room.say(1, "which runner do we keep?")
        thread = {"m.relates_to": {"rel_type": "m.thread", "event_id": root.event_id}}
        inside = await room.say(2, "the ARM ones", BOB, **thread)
        await room.say(3, "elsewhere")
        lines = await room.read(after(T0 / 1000), thread_root=root.event_id)
        assert [line.event_id for line in lines] == [root.event_id, inside.event_id]
        assert room.account.message_reads == []


async def test_edits_and_redactions_are_read_as_they_are_now(tmp_path):
    async with reading(tmp_path) as room:
        await room.say(0, "first")
        edited = await room.say(1, "we ship on Fridya")
        redacted = await room.say(2, "the password is hunter2")
        question = await room.say(3, "Knowledge Bot: the password?", addressed=True)
        await room.conversation.settled()
        # As bot/features/following does with the inbox's FollowEdit and FollowRedaction.
        await room.memory.follow_edit(ROOM, edited.event_id, ANN, "we ship on Friday", "$ed")
        await room.memory.follow_redaction(ROOM, redacted.event_id)
        await room.memory.follow_redaction(ROOM, question.event_id)
        lines = await room.read(after(T0 / 1000))
        assert [line.text for line in lines] == ["we ship on Friday"]


async def test_lines_left_out_are_read_from_the_homeserver(tmp_path):
    async with reading(tmp_path) as room:
        await room.say(0, "kept")
        room.not_before_ms = T0 + 1500  # the next line is older than the bot's joining
        old = await room.say(1, "said before the bot joined")
        room.not_before_ms = 0
        newer = await room.say(2, "kept too")
        lines = await room.read(after(T0 / 1000))
        assert [line.event_id for line in lines] == [old.event_id, newer.event_id]
        assert room.account.token_asks == [(ROOM, T0 + 1001 + TOKEN_MARGIN_MS)], (
            "the span moved past it"
        )

        room.conversation.leave_out(ROOM, T0 + 2000)  # as the sync says of a lost gap
        await room.read(after(T0 / 1000))
        assert room.account.token_asks == [(ROOM, T0 + 2001 + TOKEN_MARGIN_MS)], (
            "known before the store is"
        )
        await room.say(3, "the keeper notes it with the next line")
        await room.conversation.settled()
        assert await room.store.line_span(ROOM) == after((T0 + 2000) / 1000)


async def test_a_room_without_history_is_read_from_the_homeserver(tmp_path):
    async with reading(tmp_path, f'\n[rooms."{ROOM}"]\nhistory = false\n') as room:
        said = await chat(room)
        lines = await room.read(0.0)
        assert [line.event_id for line in lines] == [m.event_id for m in said]
        assert room.account.message_reads and await room.store.room_lines(ROOM, 0.0, END) == []
        assert await room.store.line_span(ROOM) is not None, "moved past every line it saw"


async def test_a_stopped_keeper_leaves_out_what_it_had_not_kept_and_stops_cleanly(tmp_path):
    async with reading(tmp_path) as room:
        await room.say(0, "kept")
        await room.conversation.settled()
        async with room.memory.history._lock(ROOM):  # the store busy with the room
            await room.say(1, "on its way")
            await room.say(2, "queued")
            await asyncio.sleep(0.05)
            assert room.keeping is not None
            room.keeping.cancel()  # the process stops
            await asyncio.gather(room.keeping, return_exceptions=True)
        assert await room.store.line_span(ROOM) == after((T0 + 2000) / 1000)
        assert await room.store.start_keeping("the next process") is False, "spans kept"


def test_lines_of_both_sources_join_once_each_the_newest_kept() -> None:
    fetched = [SummaryLine(7, ANN, f"old {n}", float(n), "l", f"$o{n}") for n in range(3)]
    stored = [
        RoomLine("$o2", ANN, "old 2", 2.0, "l"),
        RoomLine("$n", BOB, "new", 3.0, "l", reply_to="$o0", mentions=(ANN,)),
    ]
    lines = build_summary_lines(fetched, stored, 3)
    assert [(line.number, line.event_id) for line in lines] == [(1, "$o1"), (2, "$o2"), (3, "$n")]
    assert lines[2].reply_to == "$o0" and lines[2].mentions == (ANN,)


async def test_what_the_sync_has_not_shown_yet_comes_from_the_homeserver(tmp_path):
    """A scheduled run at 18:00 must not miss a message sent at 17:59:59 that the sync
    delivers at 18:00:01: the store only holds what the sync has shown."""
    async with reading(tmp_path) as room:
        kept = await chat(room, 0)
        room.synced_at = T0 / 1000 + 20 + SEEN_MARGIN_SECONDS  # a sync asked at T0 + 20 s
        late = await room.say(30, "the last word, not synced yet", seen=False)
        lines = await room.read(after(T0 / 1000))
        assert [line.event_id for line in lines] == [
            *(m.event_id for m in kept[1:]),
            late.event_id,
        ], "the store's lines, then the homeserver's newest, in time order"
        assert room.account.message_reads, "the homeserver was asked for the newest end"


async def test_a_process_that_has_not_synced_reads_the_homeserver(tmp_path):
    async with reading(tmp_path) as room:
        said = await chat(room, 0)
        room.synced_at = None
        room.conversation._synced_at = None
        lines = await room.read(after(T0 / 1000))
        assert [line.event_id for line in lines] == [m.event_id for m in said[1:]]
        assert room.account.message_reads, "nothing of the store is trusted"


async def test_a_redaction_decided_but_not_yet_followed_is_never_read(tmp_path):
    """After a restart, a scheduled run may read the store before the inbox has followed
    a redaction the first sync brought: the redacted line must not come back."""
    async with reading(tmp_path) as room:
        said = await chat(room, 0)
        room.conversation.note_redacted(ROOM, said[1].event_id)
        lines = await room.read(after(T0 / 1000))
        assert said[1].event_id not in [line.event_id for line in lines]
        assert [line.event_id for line in lines] == [m.event_id for m in said[2:]]


async def test_a_range_after_what_the_sync_has_shown_is_read_from_the_homeserver_alone(
    tmp_path,
):
    """Nothing before the range may come back (a scheduled run right after a restart,
    while the sync has shown less than the range's start)."""
    async with reading(tmp_path) as room:
        said = await chat(room, 0)
        room.conversation.note_synced(T0 / 1000 + 0.5 + SEEN_MARGIN_SECONDS)
        lines = await room.reader.read(ROOM, T0 / 1000 + 4, END)
        assert [line.event_id for line in lines] == [m.event_id for m in said[1:]]


def recording_page_sizes(room: Reading) -> list[int]:
    """The sizes of the pages the reader asks the homeserver for."""
    sizes: list[int] = []
    original = room.account.fetch_messages

    async def fetch(room_id: str, start: str | None, end: str | None, limit: int, **kw: Any):
        sizes.append(limit)
        return await original(room_id, start, end, limit, **kw)

    room.account.fetch_messages = fetch  # type: ignore[method-assign]
    return sizes


async def test_a_quiet_room_costs_one_small_page_and_a_busy_one_misses_nothing(tmp_path):
    """The newest seconds the sync may not have shown are read from the homeserver with
    a small first page (issue 49: a 10,000-message room read in 1.2 s instead of 8.6 s);
    when they hold more than it, the pages grow until the range is read whole."""
    async with reading(tmp_path) as room:
        said = await chat(room, 0)
        room.synced_at = T0 / 1000 + 20 + SEEN_MARGIN_SECONDS
        sizes = recording_page_sizes(room)
        quiet = await room.read(after(T0 / 1000))
        assert [line.event_id for line in quiet] == [m.event_id for m in said[1:]]
        assert sizes == [PEEK], "one small page: nothing new since the sync"

        late = [await room.say(30 + n, f"late message {n}", seen=False) for n in range(45)]
        sizes.clear()
        busy = await room.read(after(T0 / 1000))
        assert [line.event_id for line in busy] == [
            *(m.event_id for m in said[1:]),
            *(m.event_id for m in late),
        ]
        assert sizes == [PEEK, PEEK * 10]
