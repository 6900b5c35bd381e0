"""`matrix.verified_devices_only` in the bot's routing (issue 46), on a FakeAccount: a
question from a device its owner never cross-signed gets one notice per device and room
and is not answered; one with no device known in an encrypted room fails closed."""

from __future__ import annotations

from bot.matrix.types import SENDER_DEVICE
from core import strings
from tests.bot.harness import BOT, running_bot

ANN = "@ann:fake.test"


def ask_from(bot, device: str | None, question: str) -> str:
    top = {SENDER_DEVICE: device} if device is not None else {}
    content = {
        "msgtype": "m.text",
        "body": f"Knowledge Bot: {question}",
        "m.mentions": {"user_ids": [BOT]},
    }
    return str(bot.account.add_event("!r", ANN, "m.room.message", content, **top)["event_id"])


async def test_only_questions_from_cross_signed_devices_are_answered(tmp_path):
    async with running_bot(tmp_path, "verified_devices_only = true\n") as bot:
        bot.account.add_room("!r", [ANN], encrypted=True)
        bot.account.untrusted_devices.add((ANN, "LAPTOP"))
        refused = await bot.reply_to(ask_from(bot, "LAPTOP", "what is the budget?"))
        assert refused.content["body"] == strings.UNVERIFIED_DEVICE
        assert "budget" not in str(refused.content), "the message is not quoted"
        ask_from(bot, "LAPTOP", "and now?")  # told once: this one gets nothing
        answered = await bot.reply_to(ask_from(bot, "PHONE", "what is the budget?"))
        assert answered.content["body"] == "Answer to: what is the budget?"
        unknown = await bot.reply_to(ask_from(bot, None, "who are you?"))
        assert unknown.content["body"] == strings.UNVERIFIED_DEVICE, "no device: fails closed"
        notices = [
            w for w in bot.account.messages() if w.content.get("body") == strings.UNVERIFIED_DEVICE
        ]
        assert len(notices) == 2, "one per device"
        assert len(bot.answerer.requests) == 1, "only the cross-signed device's question"


async def test_without_the_setting_every_device_is_answered(tmp_path):
    async with running_bot(tmp_path) as bot:
        bot.account.add_room("!r", [ANN], encrypted=True)
        bot.account.untrusted_devices.add((ANN, "LAPTOP"))
        answered = await bot.reply_to(ask_from(bot, "LAPTOP", "what is the budget?"))
        assert answered.content["body"] == "Answer to: what is the budget?"
