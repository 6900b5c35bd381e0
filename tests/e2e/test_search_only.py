"""Search-only answers as a new admin met them on a real handbook: only relevant
passages, never a lone heading, never the asker's own commands as earlier discussion,
and "nothing found" when nothing answers."""

from __future__ import annotations

import re

import pytest

from bot.dev.synapse import free_port
from tests.e2e.people import nothing_found
from tests.e2e.scripted import ask
from tests.e2e.test_catchup import shared_room
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put

pytestmark = pytest.mark.e2e

HANDBOOK = {
    "laptops": (
        "Hardware",
        "# Hardware\n\n## Laptop replacement\n\nLaptops are replaced "
        "every four years; request a new one with form HW-12.",
    ),
    "phones": ("Phones", "Mobile phones are replaced every three years by IT."),
    "leave": (
        "Leave",
        "# Annual leave\n\nFull-time staff have 27 days of annual leave per "
        "year. Carry-over of up to five days is allowed until March 31.",
    ),
    "travel": (
        "Travel policy",
        "Trains are booked through Travelink two weeks ahead. "
        "Flights need approval from your cost-center lead.",
    ),
    "vpn": ("VPN error WG-503", "Error WG-503 means your VPN profile expired."),
    "printing": (
        "Printing",
        "Send print jobs to the queue PRINT-ALL and release them at any printer with your badge.",
    ),
    "canteen": ("Canteen", "The canteen opens at 11:30 and serves lunch until 14:00."),
}
BADGES = (
    "<html><head><title>Office badges</title></head><body><nav>Intranet menu</nav>"
    "<h1>Office badges</h1><p>Badges open the main entrance from 6:00 to 22:00.</p>"
    "<h2>Lost badges</h2><p>Report a lost badge to facilities. The fee is 15 euros.</p>"
    "</body></html>"
)
# History windows of two lines, embedded as soon as they are complete.
MEMORY = (
    "\n[memory]\nwindow_lines = 2\nwindow_overlap = 0\n"
    "[guardrails]\nuser_questions_per_minute = 0\nroom_questions_per_minute = 0\n"
)


def quotes(body: str) -> list[str]:
    return [line[2:] for line in body.splitlines() if line.startswith("> ")]


def cited_documents(body: str) -> set[str]:
    numbers = set(re.findall(r"\[(\d+)\]$", body, re.M))
    sources = dict(re.findall(r"^(\d+)\. \[?([^\]\n(]+)", body, re.M))
    return {sources[n].strip() for n in numbers if n in sources}


async def test_search_only_shows_relevant_passages_or_says_nothing_was_found(people, bot):
    alice = await people("alice")
    port = free_port()
    bot.write_config(knowledge_config(port) + MEMORY, allowed_users=[alice.user_id])
    await bot.start()
    room = await room_with_bot(alice, bot)
    for doc_id, (title, content) in HANDBOOK.items():
        await put(port, "handbook", doc_id, {"title": title, "content": content})
    await put(
        port, "handbook", "badges", {"title": "Office badges", "content": BADGES, "format": "html"}
    )

    laptops = await ask(alice, room, "how often are laptops replaced?", bot)
    assert "replaced every four years" in laptops["body"]
    assert cited_documents(laptops["body"]) == {"Hardware"}, laptops["body"]
    assert "Travelink" not in laptops["body"] and "canteen" not in laptops["body"]

    badges = await ask(alice, room, "when does my badge open the entrance?", bot)
    assert "6:00 to 22:00" in badges["body"]
    assert all(quote.strip(" [0123456789]") != "Office badges" for quote in quotes(badges["body"]))

    leave = await ask(alice, room, "who approves my parental leave?", bot)
    # What to try next, in a room where commands can show what is searched.
    assert leave["body"] == nothing_found(), leave["body"]

    # The room's own discussion is a source; commands and questions to the bot are not.
    await alice.say(room, "!help how often are laptops replaced")
    await alice.say(room, "Our team replaces laptops every four years, says Bob.")
    await alice.say(room, "Noted, thanks.")
    for _ in range(10):  # until the window with Bob's line is embedded
        answer = await ask(alice, room, "how often are laptops replaced?", bot)
        if "says Bob" in answer["body"]:
            break
    assert "says Bob" in answer["body"], "the room's discussion is searched"
    assert "!help" not in answer["body"], answer["body"]
    assert "when does my badge" not in answer["body"], "questions to the bot are not history"


DISCUSSION = [
    (
        "alice",
        "We compared Postgres and MySQL for the Atlas metadata store at length this "
        "morning: replication, backups, the licence, and what the team can operate.",
    ),
    (
        "bob",
        "MySQL has the simpler replication setup, but our backup tooling and the on-call "
        "runbooks are all written for Postgres, and nobody wants to relearn them.",
    ),
    ("alice", "So which database do we pick for the Atlas metadata store?"),
    ("bob", "Let's go with the Postgres option, it is what we know best."),
]


async def test_search_only_quotes_history_as_whole_lines_with_who_a_link_and_a_marker(people, bot):
    alice, bob = await people("alice"), await people("bob")
    memory = "\n[memory]\nwindow_lines = 4\nwindow_overlap = 0\n"
    bot.write_config(
        knowledge_config(free_port()) + memory, allowed_users=[alice.user_id, bob.user_id]
    )
    await bot.start()
    room = await shared_room(alice, bot, bob)
    said = {}
    for name, text in DISCUSSION:
        person = alice if name == "alice" else bob
        said[text] = (person.user_id, await person.say(room, text))
    for _ in range(10):  # until the window is embedded
        answer = (await ask(alice, room, "which database did we pick for Atlas?", bot))["body"]
        if "Postgres option" in answer:
            break
    shown = [quote for quote in quotes(answer) if "Postgres" in quote or "MySQL" in quote]
    assert shown, answer
    for quote in shown:
        match = re.fullmatch(r"(\S+): (.*) \(\[message\]\((\S+)\)\) \[(\d+)\]", quote)
        assert match, f"who, the whole line, its link and a marker: {quote!r}"
        sender, text, link, _ = match.groups()
        assert text in said, f"a whole message, not cut: {text!r}"
        assert sender == said[text][0] and said[text][1].replace("$", "%24") in link
    answering = "Let's go with the Postgres option, it is what we know best."
    assert any(answering in quote for quote in shown), "the line that answers is shown"
