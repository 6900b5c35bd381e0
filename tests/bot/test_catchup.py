"""`!catchup` on a fake account: exactly what came after the person's read receipt in
each room they share with the bot, grouped, linked, and only in a chat of their own."""

from __future__ import annotations

from bot.matrix.fake import Written
from core import strings
from tests.bot.harness import running_bot
from tests.bot.scenes import (
    ALICE,
    BOB,
    CAROL,
    ask,
    content_of,
    direct_chat,
    invites,
    link,
    posted,
    room_link,
    say,
    settle,
    written,
)

PEOPLE = invites(ALICE, BOB, CAROL)


def made_rooms(bot) -> list[str]:
    """The rooms the bot made (a private chat for a catch-up)."""
    return [w.room_id for w in bot.account.written if w.kind == "room"]


def joins(bot, room: str, person: str) -> None:
    """`person` accepts the invite to `room`."""
    members = dict(bot.account.room(room).members)
    members[person] = "join"
    bot.account.set_room(room, members=members)


async def test_catchup_covers_what_came_after_the_read_receipt_in_shared_rooms_only(tmp_path):
    async with running_bot(tmp_path, PEOPLE, rooms=True) as bot:
        bot.account.add_room("!a", [ALICE, BOB])
        bot.account.add_room("!b", [ALICE, BOB])
        bot.account.add_room("!c", [CAROL, ALICE])  # bob is not in this one
        direct = await direct_chat(bot, "!dm", BOB)

        read_a = say(bot, "!a", ALICE, "Old news: the printer moved to the second floor.")
        read_b = say(bot, "!b", ALICE, "Old news: lunch is at noon on Fridays.")
        bot.account.read_receipt("!a", BOB, read_a)
        bot.account.read_receipt("!b", BOB, read_b)

        decision = say(bot, "!a", ALICE, "Decision: the Vega launch moves to Monday.")
        say(
            bot,
            "!a",
            ALICE,
            "bob, can you review the migration script by Friday?",
            mentions=[BOB],
        )
        say(bot, "!b", ALICE, "We agreed to drop the legacy API in March.")
        say(bot, "!b", BOB, "I will draft the announcement for the legacy API.")
        say(bot, "!c", CAROL, "Project Nimbus has a secret budget of 9 million.")

        catchup = (await ask(bot, direct, BOB, "!catchup"))["body"]
        assert "Vega launch moves to Monday" in catchup and "drop the legacy API" in catchup
        for_you = catchup.split(strings.CATCHUP_FOR_YOU, 1)[1]
        assert (
            "review the migration script by Friday" in for_you.split(strings.SUMMARY_DECISIONS)[0]
        )
        assert link(decision) in catchup, "each point links to its message"
        for old in ("printer moved", "lunch is at noon", "Nimbus", "draft the announcement"):
            assert old not in catchup, f"{old!r}: read already, not bob's room, or bob's own"

        # Asked in a shared room, the catch-up goes to the direct chat only.
        notice = (await ask(bot, "!a", BOB, "!catchup"))["body"]
        assert notice.startswith(strings.CATCHUP_SENT.split("{")[0]), notice

        def delivered(w: Written) -> bool:
            return (
                w.room_id == direct
                and "m.relates_to" not in w.content  # a notice of its own, not a reply
                and "Vega launch moves to Monday" in w.content.get("body", "")
            )

        await written(bot, delivered)
        assert not any("Vega launch" in str(w.content) for w in posted(bot, "!a")), (
            "only bob gets bob's"
        )
        assert made_rooms(bot) == [], "the direct chat was there"


async def test_a_catchup_asked_in_a_world_readable_direct_chat_goes_to_a_private_one(tmp_path):
    async with running_bot(tmp_path, PEOPLE, rooms=True) as bot:
        bot.account.add_room("!r", [ALICE, BOB])
        say(bot, "!r", ALICE, "Decision: the Vega launch moves to Monday.")
        open_chat = await direct_chat(bot, "!open", BOB, history_visibility="world_readable")
        notice = (await ask(bot, open_chat, BOB, "!catchup"))["body"]
        assert notice.startswith(strings.CATCHUP_SENT.split("{")[0]), "anyone may read it"
        [private] = made_rooms(bot)
        assert bot.account.room(private).members[BOB] == "invite"
        delivered = await written(bot, lambda w: "Vega launch" in w.content.get("body", ""))
        assert delivered.room_id == private
        assert not any("Vega launch" in text for text in map(str, posted(bot, open_chat)))


async def test_a_catchup_never_lands_in_the_admin_room_and_its_notice_links_the_chat(tmp_path):
    """The admin room of bob and the bot holds config errors: it is no private chat, even
    when nobody else is in it. The catch-up goes to a chat of their own, linked."""
    admin = invites(ALICE, BOB, extra='[bot]\nadmin_room = "!admin"\n')
    async with running_bot(tmp_path, admin, rooms=True) as bot:
        bot.account.add_room("!admin", [BOB])
        bot.account.add_room("!r", [ALICE, BOB])
        say(bot, "!r", ALICE, "Decision: the Vega launch moves to Monday.")

        notice = (await ask(bot, "!r", BOB, "!catchup"))["body"]
        [private] = made_rooms(bot)
        assert private != "!admin"
        assert room_link(private) in notice, notice
        joins(bot, private, BOB)
        await written(
            bot, lambda w: w.room_id == private and "Vega launch" in w.content.get("body", "")
        )

        # Asked in the admin room: the catch-up goes to the same chat, the room gets the notice.
        notice = (await ask(bot, "!admin", BOB, "!catchup"))["body"]
        assert room_link(private) in notice, notice

        # Asked in that chat itself: only the catch-up, no notice that it was sent there.
        reply = (await ask(bot, private, BOB, "!catchup"))["body"]
        assert "Vega launch" in reply and room_link(private) not in reply
        await settle(bot, "!admin", BOB)
        in_admin = [content_of(w).get("body", "") for w in bot.account.messages("!admin")]
        assert not any("Vega launch" in body for body in in_admin), in_admin
        assert made_rooms(bot) == [private], "one chat of their own"


async def test_a_person_who_blocks_invites_is_told_why_the_catchup_did_not_come(tmp_path):
    """Issue 46: Matrix 1.18 lets people block invites (M_INVITE_BLOCKED); a catch-up that
    needs a new private chat was refused and the person never told."""
    async with running_bot(tmp_path, PEOPLE, rooms=True) as bot:
        bot.account.add_room("!r", [ALICE, BOB])
        say(bot, "!r", ALICE, "Decision: the Vega launch moves to Monday.")
        bot.account.blocks_invites.add(BOB)  # bob's account data blocks every invite

        notice = (await ask(bot, "!r", BOB, "!catchup"))["body"]
        with_reason = strings.CATCHUP_NOT_DELIVERED.format(reason=strings.PRIVATE_CHAT_BLOCKED)
        assert notice == with_reason, notice
        assert "Vega" not in notice, "nothing of the catch-up where others read"
        assert made_rooms(bot) == [], "no invite reached bob"
        assert not any("Vega" in w.content.get("body", "") for w in posted(bot)), posted(bot)
