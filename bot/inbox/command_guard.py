"""What every command goes through before the feature that owns it runs it: commands
turned off in the room since the decision was stored are explained instead (the config
is live), and the commands that ask the model count against the questions' rate limits."""

from __future__ import annotations

from typing import TypeVar

from bot.inbox.commands import build_command_explanation
from bot.inbox.decisions import Command, ExplainCommand, ShowHelp, decide_command_name
from bot.inbox.reply import ReplyHandler, ReplyWriter
from bot.settings_holder import SettingsHolder
from core import strings
from core.guardrails.rate_store import RateLimits

D = TypeVar("D", bound=Command)


class CommandGuard:
    def __init__(self, settings: SettingsHolder, limits: RateLimits) -> None:
        self.settings = settings
        self.limits = limits

    def guard(self, handler: ReplyHandler[D], *, asks_model: bool = False) -> ReplyHandler[D]:
        """`handler`, run only while the room allows commands, and (`asks_model`: a
        summary, of a year perhaps; a catch-up) counted as a question of its sender in
        its room. The others cost no model call: `!forget` or turning a digest off must
        never be refused."""

        async def guarded(reply: ReplyWriter, decision: D) -> None:
            settings = self.settings.current
            room = settings.room(reply.message.room_id)
            if not room.commands_enabled and not isinstance(decision, ShowHelp | ExplainCommand):
                name = decide_command_name(decision)
                room_id = reply.message.room_id
                await reply.finish(build_command_explanation(settings, room_id, name))
                return
            if asks_model and (refusal := await self._over_limit(reply)) is not None:
                await reply.finish(refusal)
                return
            await handler(reply, decision)

        return guarded

    async def _over_limit(self, reply: ReplyWriter) -> str | None:
        guard, message = self.settings.current.guardrails, reply.message
        over = await self.limits.allows(
            {
                f"user:{message.sender}": guard.user_questions_per_minute,
                f"room:{message.room_id}": guard.room_questions_per_minute,
            }
        )
        if over is None:
            return None
        return strings.RATE_LIMITED["user" if over.startswith("user:") else "room"]
