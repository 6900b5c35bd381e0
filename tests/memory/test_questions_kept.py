"""Questions to the bot are kept among a room's lines (summaries read them), yet no
history window holds one: the history found for a question is the room's discussion,
never someone's earlier question (real Chroma and the real model)."""

from __future__ import annotations

from core.memory.memory import ConversationMemory
from tests.memory.test_history import CHAT_A, NOVEMBER


async def test_a_question_is_kept_for_summaries_and_never_in_a_window(memory: ConversationMemory):
    asked = "Knowledge Bot: where does the VPN gateway live these days?"
    for n, (sender, text) in enumerate(CHAT_A[:4]):
        await memory.observe("!a", f"$a{n}", sender, text, NOVEMBER + n, f"link{n}")
        await memory.observe(
            "!a", f"$q{n}", "@eve:x", asked, NOVEMBER + n + 0.5, f"q{n}", addressed=True
        )
    for n, (sender, text) in enumerate(CHAT_A[4:8], start=4):
        await memory.observe("!a", f"$a{n}", sender, text, NOVEMBER + n, f"link{n}")

    found = await memory.history.search("!a", "Where is the VPN gateway now?", 3, 0.9)
    assert found and found[0].window.text.count("\n") == 7, "one window of the 8 dialog lines"
    assert all("these days" not in hit.window.text for hit in found)
    kept = await memory.store.room_lines("!a", NOVEMBER, NOVEMBER + 60)
    assert [line.text for line in kept].count(asked) == 4
    assert [line.event_id for line in kept if line.addressed] == ["$q0", "$q1", "$q2", "$q3"]

    await memory.follow_redaction("!a", "$q1")  # a question taken back changes no window
    assert "$q1" not in [line.event_id for line in await memory.store.room_lines("!a", 0, 1e10)]
    again = await memory.history.search("!a", "Where is the VPN gateway now?", 3, 0.9)
    assert [hit.window.id for hit in again] == [hit.window.id for hit in found]
