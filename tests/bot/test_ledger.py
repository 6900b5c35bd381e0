"""The room's ledger on a fake account: decisions and action items that summaries find
(here without a model, from the messages' own words), listed with links by
`!decisions` and `!actions`, and following edits and redactions of their messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core import strings
from tests.bot.scenes import (
    ALICE,
    ask,
    direct_chat,
    edit,
    invites,
    link,
    redact,
    running_rooms,
    say,
)

DEMO = "@demo:fake.test"


async def test_decisions_and_actions_are_listed_with_links_and_follow_their_messages(tmp_path):
    async with running_rooms(tmp_path) as bot:
        bot.account.add_room("!r", [ALICE])
        retro = say(bot, "!r", ALICE, "Decision: we move the retro to Thursday.")
        notes = say(bot, "!r", ALICE, "Dana will send the release notes by Friday")
        say(bot, "!r", ALICE, "I'll update the client profiles tomorrow")
        say(bot, "!r", ALICE, "the build is green again after the fix")
        await ask(bot, "!r", ALICE, "!summarize")

        decisions = (await ask(bot, "!r", ALICE, "!decisions"))["body"]
        assert "we move the retro to Thursday" in decisions
        assert link(retro) in decisions, "linked to its message"
        assert "retro" in (await ask(bot, "!r", ALICE, "!decisions retro"))["body"]
        none = (await ask(bot, "!r", ALICE, "!decisions budget"))["body"]
        assert none == strings.LEDGER_NONE_MATCHING["decision"].format(count=1, prefix="!")

        actions = (await ask(bot, "!r", ALICE, "!actions"))["body"]
        assert "release notes" in actions and "for Dana" in actions and "due Friday" in actions
        assert "client profiles" in actions
        mine = (await ask(bot, "!r", ALICE, "!actions mine"))["body"]
        assert "client profiles" in mine and "release notes" not in mine

        edit(bot, "!r", ALICE, retro, "Decision: we move the retro to Wednesday.")
        redact(bot, "!r", ALICE, notes)
        sentinel = (await ask(bot, "!r", ALICE, "!decisions"))["body"]  # after both, in order
        assert "Wednesday" in sentinel and "Thursday" not in sentinel
        assert "release notes" not in (await ask(bot, "!r", ALICE, "!actions"))["body"]
        assert bot.answerer.requests == [], "commands, no questions"


def _weekday_ahead(days: int) -> tuple[str, str]:
    """The name of the weekday `days` from today (UTC, the rooms' zone here) and its date
    as the ledger writes it."""
    day = datetime.now(UTC) + timedelta(days=days)
    return day.strftime("%A"), day.strftime("%d %b %Y")


async def test_a_weekday_deadline_is_the_next_such_day_and_open_until_then(tmp_path):
    async with running_rooms(tmp_path) as bot:
        bot.account.add_room("!r", [ALICE])
        wiki_day, wiki_date = _weekday_ahead(5)
        notes_day, notes_date = _weekday_ahead(2)
        say(bot, "!r", ALICE, f"Dana will update the wiki by {wiki_day}")
        say(bot, "!r", ALICE, f"I'll write the release notes by {notes_day}")
        await ask(bot, "!r", ALICE, "!summarize")

        listed = (await ask(bot, "!r", ALICE, "!actions open"))["body"]
        assert "update the wiki" in listed and "release notes" in listed, listed
        assert f"due {wiki_day} ({wiki_date})" in listed, listed
        assert f"due {notes_day} ({notes_date})" in listed, listed
        # A filter that leaves nothing says so, and how many there are in all.
        none = (await ask(bot, "!r", ALICE, "!actions open budget"))["body"]
        assert none == strings.LEDGER_NONE_MATCHING["action"].format(count=2, prefix="!"), none


async def test_a_question_to_someone_is_theirs_in_the_ledger_and_the_catchup(tmp_path):
    async with running_rooms(tmp_path, invites(ALICE, DEMO)) as bot:
        bot.account.add_room("!r", [ALICE, DEMO])
        direct = await direct_chat(bot, "!dm", DEMO)
        # Typed by hand: no pill, no m.mentions.
        say(bot, "!r", ALICE, "demo: can you review the deployment checklist before Thursday?")
        await ask(bot, "!r", ALICE, "!summarize")

        mine = (await ask(bot, "!r", DEMO, "!actions mine"))["body"]
        assert "review the deployment checklist" in mine, mine
        assert (
            "review the deployment checklist"
            not in ((await ask(bot, "!r", ALICE, "!actions mine"))["body"])
        )
        catchup = (await ask(bot, direct, DEMO, "!catchup"))["body"]
        for_you = catchup.split(strings.CATCHUP_FOR_YOU, 1)[1]
        assert "review the deployment checklist" in for_you, catchup
