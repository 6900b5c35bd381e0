"""The room's ledger: decisions and action items that summaries find, listed with links
by `!decisions` and `!actions`, found by questions like other room knowledge, and
following edits and redactions of their messages."""

from __future__ import annotations

import pytest

from bot.dev.synapse import free_port
from core import strings
from tests.e2e.scripted import ask
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_history_follows import edit
from tests.e2e.test_knowledge import knowledge_config

pytestmark = pytest.mark.e2e


async def test_decisions_and_actions_are_listed_with_links_and_follow_their_messages(people, bot):
    alice = await people("alice")
    bot.write_config(knowledge_config(free_port()), allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)
    retro = await alice.say(room, "Decision: we move the retro to Thursday.")
    notes = await alice.say(room, "Dana will send the release notes by Friday")
    await alice.say(room, "I'll update the client profiles tomorrow")
    await alice.say(room, "the build is green again after the fix")
    await ask(alice, room, "!summarize", bot)

    decisions = (await ask(alice, room, "!decisions", bot))["body"]
    assert "we move the retro to Thursday" in decisions
    assert retro.replace("$", "%24") in decisions, "linked to its message"
    assert "retro" in (await ask(alice, room, "!decisions retro", bot))["body"]
    none = (await ask(alice, room, "!decisions budget", bot))["body"]
    assert none == strings.LEDGER_NONE.format(prefix="!")

    actions = (await ask(alice, room, "!actions", bot))["body"]
    assert "release notes" in actions and "for Dana" in actions and "due Friday" in actions
    assert "client profiles" in actions
    mine = (await ask(alice, room, "!actions mine", bot))["body"]
    assert "client profiles" in mine and "release notes" not in mine

    # Room knowledge: a question finds the decision, cited with its link.
    answer = (await ask(alice, room, "when is the retro moved to?", bot))["body"]
    assert "we move the retro to Thursday" in answer, answer
    assert "Decision in this room" in answer and retro.replace("$", "%24") in answer

    await edit(alice, room, retro, "Decision: we move the retro to Wednesday.")
    await alice.redact(room, notes)
    sentinel = (await ask(alice, room, "!decisions", bot))["body"]  # after both, in order
    assert "Wednesday" in sentinel and "Thursday" not in sentinel
    assert "release notes" not in (await ask(alice, room, "!actions", bot))["body"]
