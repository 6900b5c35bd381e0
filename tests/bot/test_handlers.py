"""Every command's handler through the dispatcher on a fake account, as a table of named
cases: what people said in the room, what someone sends, and what the bot replies."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from core import strings
from tests.bot.harness import running_bot

ANN, BEN = "@ann:fake.test", "@ben:fake.test"
TALK = (
    (ANN, "Decision: the Atlas launch moves to 14 December"),
    (ANN, "Who books the venue?"),
    (BEN, "Unrelated: the printer on floor 2 is fixed."),
    (BEN, "I will tell the customers by Friday"),
)


@dataclass(frozen=True)
class Case:
    name: str
    sends: str
    says: tuple[str, ...]  # what the reply holds
    said: tuple[tuple[str, str], ...] = ()  # (sender, text) before it, not to the bot
    config: str = ""
    sender: str = BEN
    before: tuple[str, ...] = ()  # commands sent first, each waited for


CASES = [
    Case("help", "!help", (strings.HELP_HEADER, "!summarize")),
    Case("an unknown command", "!frobnicate", ("I don't know the command `!frobnicate`",)),
    Case(
        "a command turned off",
        "!summarize",
        ("Commands are turned off in this room",),
        config='[rooms."!r"]\ncommands_enabled = false\n',
    ),
    Case("memories, none yet", "!memory", (strings.MEMORY_EMPTY,)),
    Case(
        "forgetting a memory that is not there", "!forget 3", ("There is no memory number 3 here",)
    ),
    Case(
        "a summary of the room without a model",
        "!summarize",
        ("Summary of this room", "the Atlas launch moves to 14 December"),
        said=TALK,
    ),
    Case("nothing to summarise", "!summarize", ("There is nothing to summarise",)),
    Case("decisions, none yet", "!decisions", ("None yet",)),
    Case(
        "decisions a summary noted",
        "!decisions",
        (strings.LEDGER_DECISIONS, "the Atlas launch moves to 14 December"),
        said=TALK,
        before=("!summarize",),
    ),
    Case(
        "action items a summary noted",
        "!actions",
        (strings.LEDGER_ACTIONS, "tell the customers by Friday (for @ben:fake.test, due Friday"),
        said=TALK,
        before=("!summarize",),
    ),
    Case(
        "a catch-up asked in a room goes to a direct chat",
        "!catchup",
        ("I sent your catch-up to our direct chat",),
        sender=ANN,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_a_command_gets_its_reply(tmp_path, case: Case):
    async with running_bot(tmp_path, case.config, rooms=True) as bot:
        bot.account.add_room("!r", [ANN, BEN])
        for sender, text in case.said:
            bot.account.say("!r", sender, text)
        for command in case.before:
            await bot.reply_to(bot.ask("!r", case.sender, command))
        reply = await bot.reply_to(bot.ask("!r", case.sender, case.sends))
        body = reply.content.get("m.new_content", reply.content)["body"]
        for part in case.says:
            assert part in body, body
        assert bot.answerer.requests == [], "a command is no question to the answerer"
