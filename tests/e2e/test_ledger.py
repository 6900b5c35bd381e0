"""The room's ledger on a real homeserver: decisions that summaries find are found by
questions like other room knowledge. (Listed by `!decisions` and `!actions`, following
edits and redactions of their messages: tests/bot/test_ledger.py, on the fake account.)"""

from __future__ import annotations

import pytest

from bot.dev.synapse import free_port
from tests.e2e.scripted import ask
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config

pytestmark = pytest.mark.e2e


async def test_a_decision_of_the_ledger_is_room_knowledge_cited_with_its_link(people, bot):
    """A question finds what a summary noted in the room's ledger (the commands that list
    it, and how it follows its messages, are tests/bot/test_ledger.py's)."""
    alice = await people("alice")
    bot.write_config(knowledge_config(free_port()), allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)
    retro = await alice.say(room, "Decision: we move the retro to Thursday.")
    await alice.say(room, "Dana will send the release notes by Friday")
    await alice.say(room, "I'll update the client profiles tomorrow")
    await alice.say(room, "the build is green again after the fix")
    await ask(alice, room, "!summarize", bot)

    answer = (await ask(alice, room, "when is the retro moved to?", bot))["body"]
    assert "we move the retro to Thursday" in answer, answer
    assert "Decision in this room" in answer and retro.replace("$", "%24") in answer
