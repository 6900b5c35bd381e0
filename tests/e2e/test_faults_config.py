"""Config edits that go wrong, as a hurried admin makes them: bytes that are not UTF-8,
a schedule out of range, a file caught half-written. The bot keeps running on the
config it had, says what is wrong, and never applies half a file."""

from __future__ import annotations

import asyncio

import pytest

from core import strings
from tests.e2e.people import from_user, replies_to
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_lifecycle import wait_for_config

pytestmark = pytest.mark.e2e


async def still_answers(person, room: str, bot) -> None:
    question = await person.say(room, "!help", mentions=[bot.user_id])
    await person.wait_for(room, replies_to(question), timeout=30)


def reports_seen(person, admin_room: str, bot) -> list[dict]:
    """The bot's notices in the admin room as the person has them so far, but for those
    saying that an edit was applied (whether the last of those has reached the person
    yet is a race of the two syncs)."""
    return [
        event
        for event in person.seen(admin_room, from_user(bot.user_id))
        if event["content"].get("body") != strings.CONFIG_APPLIED
    ]


async def next_report(person, admin_room: str, bot, seen: int) -> str:
    """The text of the bot's next notice in the admin room after `seen` of them."""
    await person.wait_until(lambda: len(reports_seen(person, admin_room, bot)) > seen, timeout=30)
    return reports_seen(person, admin_room, bot)[seen]["content"]["body"]


async def test_broken_edits_are_reported_and_the_bot_keeps_running(people, bot):
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    admin_room = await room_with_bot(alice, bot)
    room = await room_with_bot(alice, bot)
    override = f'[rooms."{room}"]\nanswer_without_mention = true\n'
    bot.write_config(override, allowed_users=[alice.user_id], admin_room=admin_room)
    await wait_for_config(bot, lambda settings: settings.room(room).answer_without_mention)
    good = bot.config_path.read_bytes()
    reports = len(reports_seen(alice, admin_room, bot))

    bot.config_path.write_bytes(good.replace(b"Knowledge Bot", b"Knowledge \xff Bot"))
    report = await next_report(alice, admin_room, bot, reports)
    assert "not UTF-8" in report and "line" in report
    await still_answers(alice, room, bot)

    bot.config_path.write_bytes(
        good + b'\n[room_defaults]\nsummary_schedule = "every 99999999999d"\n'
    )
    report = await next_report(alice, admin_room, bot, reports + 1)
    assert "room_defaults.summary_schedule" in report
    await still_answers(alice, room, bot)

    # Half a file (valid TOML, the room's section not written yet), then the rest.
    kept = []
    watching = asyncio.create_task(_watch(bot, room, kept))
    bot.config_path.write_bytes(good[: good.index(b"[rooms.")])
    await asyncio.sleep(0.3)  # the editor pauses between its two writes
    # The whole file, with one change more, to know when the watcher has taken it.
    whole = good.replace(
        b"answer_without_mention = true",
        b'answer_without_mention = true\ntimezone = "Europe/Paris"',
    )
    bot.config_path.write_bytes(whole)
    await wait_for_config(bot, lambda settings: settings.room(room).timezone == "Europe/Paris")
    watching.cancel()
    assert kept and all(kept), "the half-written file was never applied"
    plain = await alice.say(room, "no mention needed here")
    await alice.wait_for(room, replies_to(plain), timeout=30)

    # The same cut, left as it is, is what the admin wants: it applies once stable.
    bot.config_path.write_bytes(good[: good.index(b"[rooms.")])
    await wait_for_config(bot, lambda settings: not settings.room(room).answer_without_mention)


async def _watch(bot, room: str, kept: list[bool]) -> None:
    """Record, every 20 ms, whether the running config still has the room's section."""
    while True:
        kept.append(bot.app.settings.current.room(room).answer_without_mention)
        await asyncio.sleep(0.02)


async def test_a_restricted_collection_never_shown_is_said_in_the_admin_room(people, bot):
    """A source-app developer added a restricted collection: "applied", then nothing
    found, with no word of why. An edit that makes one is said at once, and one left
    so while the bot was stopped is said when it starts again."""
    alice = await people("alice")
    bot.write_config(allowed_users=[alice.user_id])
    await bot.start()
    admin_room = await room_with_bot(alice, bot)
    tickets = (
        '[sources.tickets]\ntoken = "t"\nrights_url = "http://127.0.0.1:1/rights"\n'
        '[collections.tickets]\nsource = "tickets"\n'
    )
    seen = len(reports_seen(alice, admin_room, bot))
    bot.write_config(tickets, allowed_users=[alice.user_id], admin_room=admin_room)
    notice = strings.RIGHTS_NO_SIGNING_KEYS.format(collections="`tickets`")
    assert await next_report(alice, admin_room, bot, seen) == notice
    await bot.stop()
    await bot.start()
    assert await next_report(alice, admin_room, bot, seen + 1) == notice, "again at a start"
