"""Windows of a room's dialog embedded into that room's history, and searched there only."""

from __future__ import annotations

from datetime import UTC, datetime

from core.memory.memory import ConversationMemory
from core.memory.store import MemoryStore, SqlMemoryStore
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
        return Request("Where is the VPN gateway now?", "@ann:x", room, None, is_direct=True,
                       readers=("@ann:x",), knowledge=((room, ALWAYS),))  # fmt: skip

    here = await answerer.answer(ask("!a"))
    assert "vpn2.example.org" in here.text
    assert here.sources[0].title.startswith("Earlier discussion in this room")
    assert here.sources[0].url == "https://matrix.to/#/!a/$a0"
    elsewhere = await answerer.answer(ask("!b"))
    assert "vpn2" not in elsewhere.text and elsewhere.kind == "refusal"
