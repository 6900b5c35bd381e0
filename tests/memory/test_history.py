"""Windows of a room's dialog embedded into the rooms' history, and searched in that room only."""

from __future__ import annotations

from datetime import UTC, datetime

from core.memory.history import HISTORY_COLLECTION, collection_of
from core.memory.memory import ConversationMemory
from core.memory.store import HistoryWindow, MemoryStore, SqlMemoryStore
from core.rights.readers import ALWAYS

OCTOBER = datetime(2026, 10, 5, 9, tzinfo=UTC).timestamp()
NOVEMBER = datetime(2026, 11, 18, 9, tzinfo=UTC).timestamp()
CHAT_A = [
    ("@ann:x", "The VPN gateway moved to vpn2.example.org on Monday"),
    ("@bob:x", "ok, I will update the client profiles"),
    ("@ann:x", "remember the old one shuts down next month"),
    ("@cid:x", "lunch at noon?"),
    ("@bob:x", "sure"),
    ("@ann:x", "who reviews the release notes?"),
    ("@cid:x", "Dana does"),
    ("@bob:x", "thanks"),
    ("@ann:x", "the build is green again"),
    ("@cid:x", "great"),
]
CHAT_B = [
    ("@eve:x", "The payroll export now runs on the 25th"),
    ("@fay:x", "noted"),
    *[("@eve:x", f"unrelated line {n}") for n in range(6)],
]


async def say(memory: ConversationMemory, room: str, lines, ts: float, prefix: str) -> None:
    for n, (sender, text) in enumerate(lines):
        event = f"${prefix}{n}"
        await memory.observe(
            room, event, sender, text, ts + n, f"https://matrix.to/#/{room}/{event}"
        )


async def test_a_fact_is_found_in_its_room_and_never_in_another(memory):
    await say(memory, "!a", CHAT_A, NOVEMBER, "a")
    await say(memory, "!b", CHAT_B, NOVEMBER, "b")
    history = memory.history
    found = await history.search("!a", "Where is the VPN gateway now?", 3, 0.75)
    assert found and "vpn2.example.org" in found[0].window.text
    assert found[0].window.link == "https://matrix.to/#/!a/$a0", "links to the window's first line"
    elsewhere = await history.search("!b", "Where is the VPN gateway now?", 3, 2.0)
    assert all("vpn2" not in hit.window.text for hit in elsewhere)
    assert await history.search("!c", "VPN gateway", 3, 2.0) == []


async def test_windows_overlap_and_the_rest_waits_for_the_room_to_go_quiet(memory):
    await say(memory, "!a", CHAT_A, NOVEMBER, "a")
    store: MemoryStore = memory.store
    _, carried = await store.window_mark("!a")
    assert carried == 2, "the last window's two last lines start the next one"
    assert await memory.history.embed_ready_windows("!a", now=NOVEMBER + 10) == 0
    assert await memory.history.embed_ready_windows("!a", now=NOVEMBER + 3600) == 1
    found = await memory.history.search("!a", "is the build green?", 1, 0.9)
    assert found and "build is green" in found[0].window.text


async def test_a_time_range_keeps_the_windows_it_overlaps(memory):
    await say(memory, "!a", CHAT_A[:8], OCTOBER, "old")
    await say(memory, "!a", [(s, t.replace("VPN", "vpn")) for s, t in CHAT_A[:8]], NOVEMBER, "new")
    november = (datetime(2026, 11, 1, tzinfo=UTC).timestamp(), NOVEMBER + 3600)
    found = await memory.history.search("!a", "VPN gateway", 5, 0.9, between=november)
    assert found and all(hit.window.end_ts >= november[0] for hit in found)
    everything = await memory.history.search("!a", "VPN gateway", 5, 0.9)
    october_only = [hit for hit in everything if hit.window.end_ts < november[0]]
    assert october_only and october_only[0].window.start_ts == OCTOBER


async def test_history_survives_a_restart_and_a_line_seen_twice_counts_once(memory, run_database):
    await say(memory, "!a", CHAT_A[:5], NOVEMBER, "a")
    reopened = await SqlMemoryStore.open(await run_database())
    memory.store = memory.history.store = reopened
    await say(memory, "!a", CHAT_A[:5], NOVEMBER, "a")
    assert len(await reopened.lines_from("!a", 0)) == 5
    await say(memory, "!a", CHAT_A[5:8], NOVEMBER + 5, "rest")
    found = await memory.history.search("!a", "VPN gateway", 1, 0.9)
    assert found and found[0].window.text.count("\n") == 7, "one window of 8 lines"


async def test_search_only_answers_show_the_rooms_own_history_too(memory, kb):
    from core.passages import PassagesAnswerer
    from core.requests import Request

    await say(memory, "!a", CHAT_A[:8], NOVEMBER, "a")
    answerer = PassagesAnswerer(kb.retriever, kb.rights, kb.indexer.settings, memory)

    def ask(room: str) -> Request:
        return Request(
            "Where is the VPN gateway now?",
            "@ann:x",
            room,
            None,
            is_direct=True,
            readers=("@ann:x",),
            knowledge=((room, ALWAYS),),
        )

    here = await answerer.answer(ask("!a"))
    assert "vpn2.example.org" in here.text
    assert here.sources[0].title.startswith("Earlier discussion in this room")
    assert here.sources[0].url == "https://matrix.to/#/!a/$a0"
    elsewhere = await answerer.answer(ask("!b"))
    assert "vpn2" not in elsewhere.text and elsewhere.kind == "refusal"


async def test_every_rooms_history_shares_one_collection(memory):
    for n in range(12):
        await say(memory, f"!room{n}", CHAT_B, NOVEMBER, f"r{n}-")
    names = memory.history.vectors.names()
    assert [name for name in names if name.startswith("room.")] == [HISTORY_COLLECTION]
    found = await memory.history.search("!room3", "payroll export", 5, 2.0)
    assert found and {hit.window.room for hit in found} == {"!room3"}


async def test_the_earlier_one_collection_per_room_layout_is_moved_over(memory):
    history, model = memory.history, memory.history._model()
    window = HistoryWindow(
        f"{collection_of('!old')}-0-1",
        "!old",
        0,
        NOVEMBER,
        NOVEMBER + 1,
        "ann: The VPN gateway moved to vpn2.example.org",
        "https://matrix.to/#/!old/$o0",
    )
    embedder = history.embedders.get(model)
    vectors = await embedder.embed_passages([window.text])
    # As the earlier release wrote it: the room's own collection, no room on the vectors.
    metadata = {"start_ts": window.start_ts, "end_ts": window.end_ts}
    history.vectors.upsert(collection_of("!old"), model, [window.id], vectors, [metadata])
    await memory.store.add_windows("!old", [window], 2, 0)
    assert await history.search("!old", "Where is the VPN gateway?", 3, 0.9) == []

    assert await history.migrate_room_collections() == 1
    found = await history.search("!old", "Where is the VPN gateway?", 3, 0.9)
    assert [hit.window.id for hit in found] == [window.id]
    assert collection_of("!old") not in history.vectors.names()
    assert await history.search("!other", "Where is the VPN gateway?", 3, 2.0) == []
    assert await history.migrate_room_collections() == 0, "once"


async def test_search_only_answers_show_what_the_room_asked_to_remember(memory, kb):
    from core.memory.remember import parse_remember
    from core.passages import PassagesAnswerer
    from core.requests import Request

    def ask(text: str, room: str = "!a") -> Request:
        return Request(
            text,
            "@ann:x",
            room,
            None,
            is_direct=True,
            readers=("@ann:x",),
            knowledge=((room, ALWAYS),),
        )

    wish = parse_remember("remember that the staging database password rotates on Mondays")
    assert wish is not None
    await memory.remember(ask("remember …"), wish)
    answerer = PassagesAnswerer(kb.retriever, kb.rights, kb.indexer.settings, memory)
    here = await answerer.answer(ask("when does the staging password rotate?"))
    assert "rotates on Mondays" in here.text and here.kind == "answer"
    unrelated = await answerer.answer(ask("what is the travel policy?"))
    assert "Mondays" not in unrelated.text, "only memories that share a word with the question"
    elsewhere = await answerer.answer(ask("when does the staging password rotate?", "!b"))
    assert "Mondays" not in elsewhere.text, "a room's memories stay in the room"
