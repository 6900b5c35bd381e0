"""Who reads what the bot posts, probed in real rooms as a hostile member would: an
invited-only user, a join while an answer is written, a join then a thread follow-up, a
`joined`-visibility room, and the admin room's reports. Each probe has its positive
control: the same question shows the text while everyone reading may see it."""

from __future__ import annotations

import asyncio

import pytest

from bot.dev.synapse import free_port
from core import strings
from core.ids import localpart_of
from tests.e2e.people import bring_in, from_user, membership_of, nothing_found, replies_to
from tests.e2e.scripted import ask, llm_config, reading_model
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import put
from tests.e2e.test_rights import wiki_config
from tests.e2e.test_summaries import chat_model

pytestmark = pytest.mark.e2e
SECRET = "42,000 euros"
BUDGET = {"title": "Budget 2027", "content": f"The travel budget for 2027 is {SECRET}."}
THUMBS_DOWN = "\U0001f44e"
ANSWER_KEY = "org.knowledgebot.answer_id"
MEMORY = "[memory]\nhistory_max_distance = 1.5\n"


def config(wiki, tmp_path, port: int, llm, extra: str = "", pipeline: str = "") -> str:
    """The restricted `wiki` collection, the scripted model, and `extra` sections."""
    return wiki_config(wiki, tmp_path, port) + extra + llm_config(llm, MEMORY) + pipeline


async def start(people, bot, llm, wiki, tmp_path, *names, extra="", pipeline=""):
    """People by name (the first may read the budget), and the bot on the reading model."""
    persons = [await people(name) for name in names]
    llm.respond = reading_model
    port = free_port()
    bot.write_config(
        config(wiki, tmp_path, port, llm, extra, pipeline),
        allowed_users=[p.user_id for p in persons],
    )
    wiki.acl = {localpart_of(persons[0].user_id): {("wiki", "budget")}}
    await bot.start()
    await put(port, "wiki", "budget", BUDGET)
    return persons


def prompts_since(llm, start: int) -> str:
    return " ".join(str(call["messages"]) for call in llm.history[start:])


def bot_texts(person, room: str, bot) -> list[str]:
    """Every text the bot posted in the room as the person's client received it."""
    return [str(e["content"]) for e in person.seen(room, from_user(bot.user_id))]


async def test_an_invited_user_is_no_member_of_the_room_whose_summary_is_knowledge(
    people, bot, llm, wiki, tmp_path
):
    extra = (
        '[sources.matrix]\ntoken = "matrix-token"\n'
        '[collections.room-summaries]\nsource = "matrix"\n'
        '[summaries]\ncollection = "room-summaries"\npost_in_room = true\n'
        '[room_defaults]\nsummary_schedule = "every 10s"\n'
    )
    alice, bob = await start(people, bot, llm, wiki, tmp_path, "alice", "bob", extra=extra)
    llm.respond = chat_model
    room_a = await room_with_bot(alice, bot)
    room_b = await room_with_bot(bob, bot)
    await alice.say(room_a, "Decision: the Orion launch budget is 77 thousand")

    def summary(event: dict) -> bool:
        body = event.get("content", {}).get("body", "")
        return from_user(bot.user_id)(event) and "Orion launch budget" in body

    await alice.wait_for(room_a, summary, timeout=90)
    await alice.invite(room_a, bob.user_id)
    await bob.wait_until(lambda: room_a in bob.client.invited_rooms)
    invited = await ask(bob, room_b, "what is the Orion launch budget?", bot)
    assert "77 thousand" not in invited["body"]
    assert invited["body"] == nothing_found()

    await bob.join(room_a)
    await alice.wait_for(room_a, membership_of(bob.user_id, "join"))
    joined = await ask(bob, room_b, "what is the Orion launch budget?", bot)
    assert "77 thousand" in joined["body"], "a joined member gets the room's summary"


async def test_a_join_while_the_answer_is_written_takes_it_back_and_answers_again(
    people, bot, llm, wiki, tmp_path
):
    alice, carol = await start(
        people,
        bot,
        llm,
        wiki,
        tmp_path,
        "alice",
        "carol",
        pipeline="stream_edit_seconds = 0.2\n",
    )
    room = await room_with_bot(alice, bot)
    llm.respond = lambda body: (
        reading_model(body) if "response_format" in body else f"{SECRET} [1], says the note."
    )
    held = llm.held = asyncio.Event()
    llm.hold_after = 3
    question = await alice.say(room, "what is the travel budget?", mentions=[bot.user_id])

    def streamed(event: dict) -> bool:
        return from_user(bot.user_id)(event) and "42,000" in str(event["content"])

    shown = await alice.wait_for(room, streamed, timeout=60)
    assert shown, "while only alice reads, the streamed answer shows the figure"

    earlier = {event["event_id"] for event in alice.events}
    await bring_in(room, alice, carol)
    # What the bot posted after carol joined, in the room's order: an edit it sent
    # before the join may reach alice's sync only after it (a loaded machine).
    joined_at = next(
        n for n, event in enumerate(alice.events) if membership_of(carol.user_id, "join")(event)
    )
    helped = await carol.say(room, "!help", mentions=[bot.user_id])
    await carol.wait_for(room, replies_to(helped), timeout=30)  # the bot has seen carol come
    held.set()

    def told(event: dict) -> bool:
        return strings.AUDIENCE_CHANGED in str(event["content"])

    notice = await carol.wait_for(room, told, timeout=60)
    assert notice["sender"] == bot.user_id

    def final(event: dict) -> bool:
        return replies_to(question)(event) and event["event_id"] not in earlier and not told(event)

    again = await carol.wait_for(room, final, timeout=60)
    # Nothing every reader may open: said so, with why the search was narrower here.
    assert again["content"]["body"] == nothing_found(strings.NOTHING_FOUND_SHARED)
    after = [str(e.get("content")) for e in alice.events[joined_at + 1 :]]
    assert not any("42,000" in text for text in after), "nothing for alice alone was posted"
    await alice.wait_for(
        room, lambda e: e.get("type") == "m.room.redaction" and shown["event_id"] in str(e)
    )


async def test_a_newcomer_in_the_thread_gets_no_earlier_answer_as_context(
    people, bot, llm, wiki, tmp_path
):
    alice, carol = await start(people, bot, llm, wiki, tmp_path, "alice", "carol")
    room = await room_with_bot(alice, bot)
    question = await alice.say(room, "what is the travel budget?", mentions=[bot.user_id])
    answered = await alice.wait_for(room, replies_to(question), timeout=60)
    await alice.wait_until(lambda: any(SECRET in t for t in bot_texts(alice, room, bot)))
    assert answered

    before = len(llm.history)
    mine = await alice.say(room, "what else does that note say?", thread=question)
    await alice.wait_for(room, replies_to(mine), timeout=60)
    assert SECRET in prompts_since(llm, before), "alice's follow-up is read with the answer"

    await bring_in(room, alice, carol)
    before = len(llm.history)
    theirs = await carol.say(room, "what else does that note say?", thread=question)
    reply = await carol.wait_for(room, replies_to(theirs), timeout=60)
    assert SECRET not in prompts_since(llm, before), "no prompt for carol holds the answer"
    assert "42,000" not in str(reply["content"])


async def test_a_joined_visibility_room_keeps_earlier_memories_and_history_from_newcomers(
    people, bot, llm, wiki, tmp_path
):
    alice, carol = await start(people, bot, llm, wiki, tmp_path, "alice", "carol")
    room = await room_with_bot(alice, bot, visibility="joined")
    await alice.say(room, "Decision: the vault code for the Zephyr archive is 4242")
    for line in ["ok", "noted", "lunch at noon?", "sure", "the build is green", "great", "fine"]:
        await alice.say(room, line)
    kept = await ask(alice, room, "remember that the Zephyr deadline is 3 March", bot)
    assert kept["body"].startswith("Noted")
    assert "3 March" in (await ask(alice, room, "!memory", bot))["body"]
    recalled = await ask(alice, room, "what is the vault code for the Zephyr archive?", bot)
    assert "4242" in recalled["body"], "members from the start get the room's history"

    await bring_in(room, alice, carol)
    before = len(llm.history)
    probed = await ask(carol, room, "what is the vault code for the Zephyr archive?", bot)
    deadline = await ask(carol, room, "when is the Zephyr deadline?", bot)
    listed = await ask(carol, room, "!memory", bot)
    assert "4242" not in probed["body"] and "3 March" not in deadline["body"]
    assert listed["body"] == strings.MEMORY_EMPTY
    prompts = prompts_since(llm, before)
    assert "4242" not in prompts and "3 March" not in prompts


async def test_feedback_reports_show_details_only_where_every_reader_could_read_them(
    people, bot, llm, wiki, tmp_path
):
    alice, dave = await people("alice"), await people("dave")
    admin_room = await alice.create_room([bot.user_id])
    extra = f"[feedback]\nadmins = ['{alice.user_id}']\n"
    llm.respond = reading_model
    port = free_port()
    bot.write_config(
        config(wiki, tmp_path, port, llm, extra),
        allowed_users=[alice.user_id, dave.user_id],
        admin_room=admin_room,
    )
    wiki.acl = {localpart_of(alice.user_id): {("wiki", "budget")}}
    await bot.start()
    await put(port, "wiki", "budget", BUDGET)
    await alice.wait_for(admin_room, membership_of(bot.user_id, "join"))
    room = await room_with_bot(alice, bot)
    answer = await ask(alice, room, "what is the travel budget?", bot)
    assert SECRET in answer["body"]
    notices = alice.seen(room, from_user(bot.user_id))
    original = [e for e in notices if "m.new_content" not in e["content"]][-1]
    await alice.react(room, original["event_id"], THUMBS_DOWN)
    await alice.wait_for(room, lambda e: strings.FEEDBACK_ASK in str(e.get("content")), 30)

    alone = await ask(alice, admin_room, "!feedback worst", bot)
    assert "what is the travel budget?" in alone["body"] and "Budget 2027" in alone["body"]

    await bring_in(admin_room, alice, dave)
    shared = await ask(alice, admin_room, "!feedback worst", bot)
    assert "👎 1" in shared["body"] and answer[ANSWER_KEY] in shared["body"]
    for hidden in ("what is the travel budget?", "Budget 2027", "42,000"):
        assert hidden not in shared["body"]
    exported = await ask(alice, admin_room, "!feedback export", bot)
    assert exported["body"].startswith("Exported 1")
    upload = next(
        e for e in dave.seen(admin_room, lambda e: e["content"].get("msgtype") == "m.file")
    )
    data = (await dave.client.download(upload["content"]["url"])).body.decode()
    assert '"hidden": true' in data and "travel budget" not in data and "Budget" not in data
