"""A room upgrade (`/rooms/{id}/upgrade`) on a real homeserver: the bot follows the room
into its successor with what it keeps of it (issue 46)."""

from __future__ import annotations

from urllib.parse import quote

import aiohttp
import pytest

from bot.dev.synapse import free_port
from core import strings
from core.i18n.language import speaking
from tests.e2e.people import from_user, membership_of, replies_to
from tests.e2e.scripted import ask
from tests.e2e.test_knowledge import knowledge_config

pytestmark = pytest.mark.e2e


async def upgrade(person, room: str, version: str = "11") -> str:
    """The room upgraded as a room admin does in a client; the successor's id."""
    client = person.client
    url = f"{client.homeserver}/_matrix/client/v3/rooms/{quote(room, safe='')}/upgrade"
    headers = {"Authorization": f"Bearer {client.access_token}"}
    async with aiohttp.ClientSession() as http:
        async with http.post(url, json={"new_version": version}, headers=headers) as done:
            assert done.status == 200, await done.text()
            return str((await done.json())["replacement_room"])


async def test_the_bot_follows_an_upgraded_room_with_its_settings_memories_summaries_and_ledger(
    people, bot
):
    alice = await people("alice")
    room = await alice.create_room([bot.user_id])
    # The bot may still post in the old room once it is closed (its moderators may).
    # (Room version 12: the creator has every power without a level of their own.)
    levels = {"users": {bot.user_id: 50}}
    put = await alice.client.room_put_state(room, "m.room.power_levels", levels)
    assert hasattr(put, "event_id"), put
    # The room's own setting: the bot speaks German there.
    # Its scheduled summaries are written back as knowledge (and posted there).
    bot.write_config(
        knowledge_config(free_port())
        + '[collections.room-summaries]\nsource = "wiki"\n'
        + '[summaries]\ndefault_hours = 24\ncollection = "room-summaries"\npost_in_room = true\n'
        + f'[rooms."{room}"]\nlanguage = "de"\nsummary_schedule = "every 10s"\n',
        allowed_users=[alice.user_id],
    )
    await bot.start()
    await alice.wait_for(room, membership_of(bot.user_id, "join"))
    await ask(alice, room, "remember that the parking code is 4711", bot)
    await alice.say(room, "Decision: the offsite moves to Lisbon")
    await alice.say(room, "I will book the venue by Friday")
    await ask(alice, room, "!summarize", bot)
    await alice.wait_for(
        room,
        lambda e: (
            from_user(bot.user_id)(e)
            and "m.relates_to" not in e["content"]
            and "Lisbon" in e["content"].get("body", "")
        ),
        90,
    )

    new = await upgrade(alice, room)
    # Where the new room does not let it join by itself (invite only), the invite that
    # clients send the members of the old room lets it in, as any invite.
    await alice.invite(new, bot.user_id)
    await alice.wait_for(new, membership_of(bot.user_id, "join"), timeout=60)
    notice = await alice.wait_for(
        room, lambda e: from_user(bot.user_id)(e) and quote(new, safe="") in str(e), 60
    )
    with speaking("de"):
        moved = strings.ROOM_UPGRADED.split("{")[0]
        help_header = strings.HELP_HEADER
    assert notice["content"]["body"].startswith(moved), "said in the room's language"

    help_text = (await ask(alice, new, "!help", bot))["body"]
    assert help_text.startswith(help_header), "the old room's setting applies"
    answer = await ask(alice, new, "Knowledge Bot: what is the parking code?", bot)
    assert "4711" in answer["body"], answer["body"]
    actions = (await ask(alice, new, "!actions", bot))["body"]
    assert "book the venue" in actions, actions
    offsite = await ask(alice, new, "Knowledge Bot: where does the offsite move to?", bot)
    assert "Summary of test room" in offsite["body"], "the old room's written-back summary"

    # Nothing more in the old room: a question there is left, the new room's answered.
    await alice.say(room, "Knowledge Bot: is anyone here?", mentions=[bot.user_id])
    sentinel = await alice.say(new, "Knowledge Bot: the parking code?", mentions=[bot.user_id])
    await alice.wait_for(new, replies_to(sentinel), timeout=60)
    after = [
        e for e in alice.seen(room, from_user(bot.user_id)) if e["event_id"] != notice["event_id"]
    ]
    assert all(e["origin_server_ts"] < notice["origin_server_ts"] for e in after), after
