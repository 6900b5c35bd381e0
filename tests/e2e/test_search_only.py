"""Search-only answers as a new admin met them on a real handbook: only relevant
passages, never a lone heading, never the asker's own commands as earlier discussion,
and "nothing found" when nothing answers."""

from __future__ import annotations

import re

import pytest

from bot.dev.synapse import free_port
from core import strings
from tests.e2e.scripted import ask
from tests.e2e.test_conversation import room_with_bot
from tests.e2e.test_knowledge import knowledge_config, put

pytestmark = pytest.mark.e2e

HANDBOOK = {
    "laptops": ("Hardware", "# Hardware\n\n## Laptop replacement\n\nLaptops are replaced "
                "every four years; request a new one with form HW-12."),
    "phones": ("Phones", "Mobile phones are replaced every three years by IT."),
    "leave": ("Leave", "# Annual leave\n\nFull-time staff have 27 days of annual leave per "
              "year. Carry-over of up to five days is allowed until March 31."),
    "travel": ("Travel policy", "Trains are booked through Travelink two weeks ahead. "
               "Flights need approval from your cost-center lead."),
    "vpn": ("VPN error WG-503", "Error WG-503 means your VPN profile expired."),
    "printing": ("Printing", "Send print jobs to the queue PRINT-ALL and release them at any "
                 "printer with your badge."),
    "canteen": ("Canteen", "The canteen opens at 11:30 and serves lunch until 14:00."),
}  # fmt: skip
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
    await put(port, "handbook", "badges", {"title": "Office badges", "content": BADGES,
                                           "format": "html"})  # fmt: skip

    laptops = await ask(alice, room, "how often are laptops replaced?", bot)
    assert "replaced every four years" in laptops["body"]
    assert cited_documents(laptops["body"]) == {"Hardware"}, laptops["body"]
    assert "Travelink" not in laptops["body"] and "canteen" not in laptops["body"]

    badges = await ask(alice, room, "when does my badge open the entrance?", bot)
    assert "6:00 to 22:00" in badges["body"]
    assert all(quote.strip(" [0123456789]") != "Office badges" for quote in quotes(badges["body"]))

    leave = await ask(alice, room, "who approves my parental leave?", bot)
    assert leave["body"] == strings.NOTHING_FOUND, leave["body"]

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
