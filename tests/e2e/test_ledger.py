"""The room's ledger: decisions and action items that summaries find, listed with links
by `!decisions` and `!actions`, found by questions like other room knowledge, and
following edits and redactions of their messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.dev.synapse import free_port
from core import strings
from tests.e2e.people import membership_of
from tests.e2e.scripted import ask
from tests.e2e.test_catchup import shared_room
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
    assert none == strings.LEDGER_NONE_MATCHING["decision"].format(count=1, prefix="!")

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


def _weekday_ahead(days: int) -> tuple[str, str]:
    """The name of the weekday `days` from today (UTC, the rooms' zone here) and its date
    as the ledger writes it."""
    day = datetime.now(UTC) + timedelta(days=days)
    return day.strftime("%A"), day.strftime("%d %b %Y")


async def test_a_weekday_deadline_is_the_next_such_day_and_open_until_then(people, bot):
    alice = await people("alice")
    bot.write_config(knowledge_config(free_port()), allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)
    wiki_day, wiki_date = _weekday_ahead(5)
    notes_day, notes_date = _weekday_ahead(2)
    await alice.say(room, f"Dana will update the wiki by {wiki_day}")
    await alice.say(room, f"I'll write the release notes by {notes_day}")
    await ask(alice, room, "!summarize", bot)

    listed = (await ask(alice, room, "!actions open", bot))["body"]
    assert "update the wiki" in listed and "release notes" in listed, listed
    assert f"due {wiki_day} ({wiki_date})" in listed, listed
    assert f"due {notes_day} ({notes_date})" in listed, listed
    # A filter that leaves nothing says so, and how many there are in all.
    none = (await ask(alice, room, "!actions open budget", bot))["body"]
    assert none == strings.LEDGER_NONE_MATCHING["action"].format(count=2, prefix="!"), none


async def test_a_question_to_someone_is_theirs_in_the_ledger_and_the_catchup(people, bot):
    alice, demo = await people("alice"), await people("demo")
    bot.write_config(knowledge_config(free_port()), allowed_users=[alice.user_id, demo.user_id])
    await bot.start()
    room = await shared_room(alice, bot, demo)
    direct = await demo.create_room([bot.user_id], direct=True)
    await demo.wait_for(direct, membership_of(bot.user_id, "join"))
    localpart = demo.user_id.split(":")[0]
    # Typed by hand: no pill, no m.mentions.
    await alice.say(room, f"{localpart}: can you review the deployment checklist before Thursday?")
    await ask(alice, room, "!summarize", bot)

    mine = (await ask(demo, room, "!actions mine", bot))["body"]
    assert "review the deployment checklist" in mine, mine
    assert (
        "review the deployment checklist"
        not in (await ask(alice, room, "!actions mine", bot))["body"]
    )
    catchup = (await ask(demo, direct, "!catchup", bot, timeout=90))["body"]
    for_you = catchup.split(strings.CATCHUP_FOR_YOU, 1)[1]
    assert "review the deployment checklist" in for_you, catchup
