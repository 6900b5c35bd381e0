"""`!catchup` on a real homeserver: exactly what came after the person's read receipt in
each room they share with the bot, grouped, linked, and only in their direct chat."""

from __future__ import annotations

import pytest

from core import strings
from tests.e2e.people import from_user, membership_of
from tests.e2e.scripted import ask

pytestmark = pytest.mark.e2e


async def shared_room(owner, bot, *others) -> str:
    room = await owner.create_room([bot.user_id, *(o.user_id for o in others)])
    await owner.wait_for(room, membership_of(bot.user_id, "join"))
    for other in others:
        await other.wait_until(lambda person=other: room in person.client.invited_rooms)
        await other.join(room)
        await owner.wait_for(room, membership_of(other.user_id, "join"))
    return room


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
