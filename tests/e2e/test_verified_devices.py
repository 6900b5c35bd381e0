"""Verified devices only (MSC4153, issue 46): with `matrix.verified_devices_only`, the bot
acts only on messages from devices their owner cross-signed, and its room keys reach
only those; without it, every device is answered."""

from __future__ import annotations

import pytest

from bot.matrix.cross_signing import ensure_cross_signed
from core import strings
from tests.e2e.conftest import PASSWORD
from tests.e2e.people import from_user, membership_of, replies_to
from tests.e2e.scripted import finished_reply

pytestmark = pytest.mark.e2e


async def test_only_cross_signed_devices_are_answered_and_get_the_keys(people, bot, tmp_path):
    alice, bob = await people("alice"), await people("bob")
    # Alice's client cross-signs her device, as Element does; bob's never does.
    (tmp_path / "alice-keys").mkdir()
    await ensure_cross_signed(alice.client, tmp_path / "alice-keys", PASSWORD)
    bot.credential += "\nverified_devices_only = true"
    bot.write_config(allowed_users=[alice.user_id, bob.user_id])
    await bot.start()
    room = await alice.create_room([bot.user_id, bob.user_id], encrypted=True)
    await bob.wait_until(lambda: room in bob.client.invited_rooms)
    await bob.join(room)
    await alice.wait_for(room, membership_of(bot.user_id, "join"))
    await alice.wait_for(room, membership_of(bob.user_id, "join"))

    asked = await bob.say(room, "Knowledge Bot: what is the travel policy?", mentions=[bot.user_id])
    refused = await finished_reply(alice, room, replies_to(asked), timeout=60)
    assert refused["body"] == strings.UNVERIFIED_DEVICE, refused["body"]
    again = await bob.say(room, "Knowledge Bot: hello?", mentions=[bot.user_id])

    question = await alice.say(
        room, "Knowledge Bot: what is the leave policy?", mentions=[bot.user_id]
    )
    answer = await alice.wait_for(room, replies_to(question), timeout=60)
    assert answer["event_id"] in alice.decrypted, "the cross-signed device reads the answer"
    # Bob's device got no room key for it: his client holds it, undecryptable.
    await bob.wait_for(room, lambda e: e["event_id"] == answer["event_id"], timeout=60)
    assert answer["event_id"] not in bob.decrypted
    # One notice per device and room: his second message got none.
    notices = alice.seen(
        room,
        lambda e: (
            from_user(bot.user_id)(e) and e["content"].get("body") == strings.UNVERIFIED_DEVICE
        ),
    )
    assert len(notices) == 1 and not alice.seen(room, replies_to(again))

    # With the setting off, bob's device is answered too.
    await bot.stop()
    bot.credential = bot.credential.replace("verified_devices_only = true", "")
    bot.write_config(allowed_users=[alice.user_id, bob.user_id])
    await bot.start()
    later = await bob.say(room, "Knowledge Bot: and now?", mentions=[bot.user_id])
    reply = await finished_reply(alice, room, replies_to(later), timeout=60)
    assert reply["body"] != strings.UNVERIFIED_DEVICE
