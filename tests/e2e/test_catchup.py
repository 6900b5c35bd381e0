"""`!catchup` on a real homeserver: exactly what came after the person's read receipt in
each room they share with the bot, grouped, linked, and only in their direct chat."""

from __future__ import annotations

from urllib.parse import quote

import aiohttp
import pytest

from core import strings
from tests.e2e.people import from_user, membership_of, replies_to, settle
from tests.e2e.scripted import ask
from tests.e2e.test_lifecycle import wait_for_config

pytestmark = pytest.mark.e2e


async def shared_room(owner, bot, *others) -> str:
    room = await owner.create_room([bot.user_id, *(o.user_id for o in others)])
    await owner.wait_for(room, membership_of(bot.user_id, "join"))
    for other in others:
        await other.wait_until(lambda person=other: room in person.client.invited_rooms)
        await other.join(room)
        await owner.wait_for(room, membership_of(other.user_id, "join"))
    return room


async def test_catchup_covers_what_came_after_the_read_receipt_in_shared_rooms_only(people, bot):
    alice, bob, carol = await people("alice"), await people("bob"), await people("carol")
    bot.write_config(allowed_users=[alice.user_id, bob.user_id, carol.user_id])
    await bot.start()
    room_a = await shared_room(alice, bot, bob)
    room_b = await shared_room(alice, bot, bob)
    room_c = await shared_room(carol, bot, alice)  # bob is not in this one
    direct = await bob.create_room([bot.user_id], direct=True)
    await bob.wait_for(direct, membership_of(bot.user_id, "join"))

    read_a = await alice.say(room_a, "Old news: the printer moved to the second floor.")
    read_b = await alice.say(room_b, "Old news: lunch is at noon on Fridays.")
    await bob.client.update_receipt_marker(room_a, read_a)
    await bob.client.update_receipt_marker(room_b, read_b)

    decision = await alice.say(room_a, "Decision: the Vega launch moves to Monday.")
    await alice.say(
        room_a, "bob, can you review the migration script by Friday?", mentions=[bob.user_id]
    )
    await alice.say(room_b, "We agreed to drop the legacy API in March.")
    await bob.say(room_b, "I will draft the announcement for the legacy API.")
    await carol.say(room_c, "Project Nimbus has a secret budget of 9 million.")

    catchup = (await ask(bob, direct, "!catchup", bot, timeout=90))["body"]
    assert "Vega launch moves to Monday" in catchup and "drop the legacy API" in catchup
    for_you = catchup.split(strings.CATCHUP_FOR_YOU, 1)[1]
    assert "review the migration script by Friday" in for_you.split(strings.SUMMARY_DECISIONS)[0]
    assert decision.replace("$", "%24") in catchup, "each point links to its message"
    for old in ("printer moved", "lunch is at noon", "Nimbus", "draft the announcement"):
        assert old not in catchup, f"{old!r}: read already, not bob's room, or bob's own"

    # Asked in a shared room, the catch-up goes to the direct chat only.
    sent = await bob.say(room_a, "!catchup")
    notice = (await bob.wait_for(room_a, replies_to(sent), timeout=90))["content"]
    assert notice["body"].startswith(strings.CATCHUP_SENT.split("{")[0]), notice

    def delivered(event: dict) -> bool:
        content = event.get("content", {})
        return (
            from_user(bot.user_id)(event)
            and "m.relates_to" not in content  # a notice of its own, not a reply
            and "Vega launch moves to Monday" in content.get("body", "")
        )

    await bob.wait_for(direct, delivered, timeout=60)
    seen_in_a = [str(e["content"]) for e in alice.seen(room_a, from_user(bot.user_id))]
    assert not any("Vega launch" in text for text in seen_in_a), "only bob gets bob's"


async def alice_and_bob_with_the_bot(people, bot) -> tuple:
    """Alice and bob in a room with the bot, bob in a direct chat with it; the bot started."""
    alice, bob = await people("alice"), await people("bob")
    bot.write_config(allowed_users=[alice.user_id, bob.user_id])
    await bot.start()
    room = await shared_room(alice, bot, bob)
    direct = await bob.create_room([bot.user_id], direct=True)
    await bob.wait_for(direct, membership_of(bot.user_id, "join"))
    return alice, bob, room, direct


async def test_a_digest_comes_once_per_scheduled_time_across_a_restart(people, bot):
    alice, bob, room, direct = await alice_and_bob_with_the_bot(people, bot)
    schedule = (await ask(bob, direct, "!catchup every 10s", bot))["body"]
    assert schedule.startswith("Your catch-up comes every 10 s")

    def digests_with(text: str) -> list[dict]:
        return [
            event
            for event in bob.seen(direct, from_user(bot.user_id))
            if text in event["content"].get("body", "")
            and event["content"]["body"].startswith("**Your catch-up**")
        ]

    await alice.say(room, "Decision: the Atlas freeze starts on the 10th.")
    await bob.wait_until(lambda: digests_with("Atlas freeze"), timeout=60)
    await bot.stop()
    await bot.start()
    await alice.say(room, "Decision: the Borealis demo is on Tuesday.")
    await bob.wait_until(lambda: digests_with("Borealis demo"), timeout=60)
    await alice.say(room, "Decision: the Cygnus review is cancelled.")
    await bob.wait_until(lambda: digests_with("Cygnus review"), timeout=60)

    assert len(digests_with("Atlas freeze")) == 1, "not again after the restart"
    assert len(digests_with("Borealis demo")) == 1, "each message in one digest only"
    headings = [e["content"]["body"].split("\n")[0] for e in digests_with("Your catch-up")]
    assert len(headings) == len(set(headings)), "one digest per scheduled time"
    assert (await ask(bob, direct, "!catchup off", bot))["body"] == strings.DIGEST_OFF


async def test_a_catchup_asked_in_a_world_readable_direct_chat_goes_to_a_private_one(people, bot):
    alice, bob = await people("alice"), await people("bob")
    bot.write_config(allowed_users=[alice.user_id, bob.user_id])
    await bot.start()
    room = await shared_room(alice, bot, bob)
    await alice.say(room, "Decision: the Vega launch moves to Monday.")
    open_chat = await bob.create_room([bot.user_id], direct=True, visibility="world_readable")
    await bob.wait_for(open_chat, membership_of(bot.user_id, "join"))
    sent = await bob.say(open_chat, "!catchup")
    notice = (await bob.wait_for(open_chat, replies_to(sent), timeout=90))["content"]
    assert notice["body"].startswith(strings.CATCHUP_SENT.split("{")[0]), "anyone may read it"
    await bob.wait_until(lambda: bool(bob.client.invited_rooms), timeout=30)
    private = next(iter(bob.client.invited_rooms))
    await bob.join(private)
    delivered = await bob.wait_for(
        private, lambda e: "Vega launch" in e.get("content", {}).get("body", ""), timeout=60
    )
    assert from_user(bot.user_id)(delivered)


def link_to(room_id: str) -> str:
    """How a notice links a room (bot/inbox/links.py): its id, escaped, in matrix.to."""
    return "https://matrix.to/#/" + room_id.replace("!", "%21").replace(":", "%3A")


async def test_a_catchup_never_lands_in_the_admin_room_and_its_notice_links_the_chat(people, bot):
    """The admin room of bob and the bot holds config errors: it is no private chat, even
    when nobody else is in it. The catch-up goes to a chat of their own, linked."""
    alice, bob = await people("alice"), await people("bob")
    bot.write_config(allowed_users=[alice.user_id, bob.user_id])
    await bot.start()
    admin_room = await bob.create_room([bot.user_id])
    await bob.wait_for(admin_room, membership_of(bot.user_id, "join"))
    bot.write_config(allowed_users=[alice.user_id, bob.user_id], admin_room=admin_room)
    await wait_for_config(bot, lambda settings: settings.bot.admin_room == admin_room)
    room = await shared_room(alice, bot, bob)
    await alice.say(room, "Decision: the Vega launch moves to Monday.")

    sent = await bob.say(room, "!catchup")
    notice = (await bob.wait_for(room, replies_to(sent), timeout=90))["content"]["body"]
    await bob.wait_until(lambda: bool(bob.client.invited_rooms), timeout=30)
    private = next(iter(bob.client.invited_rooms))
    assert private != admin_room
    assert link_to(private) in notice, notice
    await bob.join(private)
    await bob.wait_for(private, lambda e: "Vega launch" in e["content"].get("body", ""), 60)

    # Asked in the admin room: the catch-up goes to the same chat, the room gets the notice.
    sent = await bob.say(admin_room, "!catchup")
    notice = (await bob.wait_for(admin_room, replies_to(sent), timeout=90))["content"]["body"]
    assert link_to(private) in notice, notice

    # Asked in that chat itself: only the catch-up, no notice that it was sent there.
    sent = await bob.say(private, "!catchup")
    reply = (await bob.wait_for(private, replies_to(sent), timeout=90))["content"]["body"]
    assert "Vega launch" in reply and link_to(private) not in reply
    await settle(bob, admin_room)
    in_admin = [e["content"].get("body", "") for e in bob.seen(admin_room, from_user(bot.user_id))]
    assert not any("Vega launch" in body for body in in_admin), in_admin


async def test_a_person_who_blocks_invites_is_told_why_the_catchup_did_not_come(people, bot):
    """Issue 46: Matrix 1.18 lets people block invites (M_INVITE_BLOCKED); a catch-up that
    needs a new private chat was refused and the person never told."""
    alice, bob = await people("alice"), await people("bob")
    bot.write_config(allowed_users=[alice.user_id, bob.user_id])
    await bot.start()
    room = await shared_room(alice, bot, bob)
    await alice.say(room, "Decision: the Vega launch moves to Monday.")
    # Bob's client blocks every invite (the account data Synapse reads, MSC4380).
    client = bob.client
    url = (
        f"{client.homeserver}/_matrix/client/v3/user/{quote(client.user_id)}"
        "/account_data/m.invite_permission_config"
    )
    headers = {"Authorization": f"Bearer {client.access_token}"}
    async with aiohttp.ClientSession() as http:
        async with http.put(url, json={"default_action": "block"}, headers=headers) as done:
            assert done.status == 200, await done.text()

    notice = (await ask(bob, room, "!catchup", bot, timeout=90))["body"]
    with_reason = strings.CATCHUP_NOT_DELIVERED.format(reason=strings.PRIVATE_CHAT_BLOCKED)
    assert notice == with_reason, notice
    assert "Vega" not in notice, "nothing of the catch-up where others read"
    assert not bob.client.invited_rooms, "no invite reached bob"
