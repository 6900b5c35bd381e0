"""The rooms' lines on their way to the history: an edit or a redaction followed in the
history waits for the lines said before it, and only for those."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from bot.features.answers.conversation import Conversation
from bot.inbox.events import IncomingMessage
from bot.inbox.mentions import BotIdentity
from bot.settings_holder import SettingsHolder
from core.config import parse_config
from core.ids import EventID, RoomID, UserID
from core.memory.memory import ConversationMemory
from tests.bot.harness import CONFIG


class SlowHistory:
    """A history whose writes wait until the test lets each line in."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.let_in: dict[str, asyncio.Event] = {}

    async def observe(self, room_id: str, event_id: str, *args: Any, **line: Any) -> None:
        await self.let_in.setdefault(event_id, asyncio.Event()).wait()
        self.kept.append(event_id)

    async def start_keeping(self, keeper: str) -> bool:
        return False

    async def stop_keeping(self, keeper: str) -> None:
        return None


def line(event_id: str) -> IncomingMessage:
    return IncomingMessage(
        EventID(event_id), RoomID("!r"), UserID("@ann:fake.test"), 1_000, "m.text", "hello"
    )


async def test_settled_waits_for_the_lines_before_it_and_not_for_later_ones(tmp_path):
    settings = SettingsHolder(
        parse_config(CONFIG, origin="bot.toml", env={"BOT_PASSWORD": "x"}, base_dir=tmp_path)
    )
    history = SlowHistory()

    async def from_the_start(room_id: str) -> int:
        return 0

    conversation = Conversation(
        BotIdentity(UserID("@bot:fake.test"), "Knowledge Bot"),
        settings,
        cast(ConversationMemory, history),
        from_the_start,
    )
    keeping = asyncio.create_task(conversation.keep_history())
    try:
        await conversation.observe(line("$before"))
        settled = asyncio.create_task(conversation.settled())
        await conversation.observe(line("$after"))  # a busy room goes on talking
        history.let_in.setdefault("$before", asyncio.Event()).set()
        await asyncio.wait_for(settled, timeout=5)
        assert history.kept == ["$before"], "settled before the line said before it was kept"
        history.let_in.setdefault("$after", asyncio.Event()).set()
        await asyncio.wait_for(conversation.settled(), timeout=5)
        assert history.kept == ["$before", "$after"]
    finally:
        keeping.cancel()
