"""The `!commands`: each to the feature that serves it, or the help and its explanations."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from bot.features.catchup.desk import CatchupDesk
from bot.features.feedback.desk import FeedbackDesk
from bot.features.memory.commands import build_forgotten, build_memory_list, decide_forget
from bot.features.summaries.desk import SummaryDesk
from bot.inbox.commands import build_command_reply, decide_abilities
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.reply import ReplyWriter
from bot.inbox.routing import ExplainCommand, RunCommand
from bot.settings_holder import SettingsHolder
from core import strings
from core.config import Settings
from core.guardrails.rate_store import RateLimits
from core.memory.memory import ConversationMemory
from core.metrics import Metrics

# The commands that may ask the model, and so count against the rate limits.
MODEL_COMMANDS = frozenset({"summarize", "catchup"})


class FileSummaries(Protocol):
    async def summarize(self, reply: ReplyWriter, file_event: str) -> bool:
        """The summary of a shared file; False when the event is no file."""
        ...


@dataclass(frozen=True)
class Desks:
    memory: ConversationMemory | None = None
    feedback: FeedbackDesk | None = None
    summaries: SummaryDesk | None = None
    metrics: Metrics | None = None
    catchup: CatchupDesk | None = None
    # The questions-per-minute of people and rooms, which commands count against too.
    limits: RateLimits | None = None
    # `!summarize` replying to a shared file summarises the file (bot/features/files).
    files: FileSummaries | None = None

    def register(
        self,
        dispatcher: Dispatcher,
        settings: SettingsHolder,
        is_direct: Callable[[str], Awaitable[bool]],
    ) -> None:
        """The kinds of event this feature handles: commands run or explained."""

        async def reply_to(reply: ReplyWriter, action: RunCommand | ExplainCommand) -> None:
            direct = await is_direct(reply.message.room_id)
            await self.run_command(reply, action, settings.current, direct)

        dispatcher.on_reply(RunCommand, reply_to)
        dispatcher.on_reply(ExplainCommand, reply_to)

    async def run_command(
        self,
        reply: ReplyWriter,
        action: RunCommand | ExplainCommand,
        settings: Settings,
        is_direct: bool,
    ) -> None:
        """A command for a desk, or the help and its explanations. Commands turned off
        since the decision was stored are explained, not run (the config is live)."""
        room = settings.room(reply.message.room_id)
        prefix = settings.bot.command_prefix
        explanation = build_command_reply(
            action.name, action.args, room, prefix, is_direct, decide_abilities(settings)
        )
        if not isinstance(action, RunCommand) or not (
            room.commands_enabled or action.name == "help"
        ):
            await reply.finish(explanation)
        elif (refusal := await self._over_limit(reply, action, settings)) is not None:
            await reply.finish(refusal)
        elif action.name in ("memory", "forget") and self.memory is not None:
            await reply.finish(await self._memory_reply(reply, action, settings.bot.command_prefix))
        elif action.name == "feedback" and self.feedback is not None:
            await self.feedback.command(reply, action)
        elif action.name == "summarize" and await self._summarized_file(reply):
            pass
        elif action.name == "summarize" and self.summaries is not None:
            await self.summaries.command(reply, action)
        elif action.name in ("decisions", "actions") and self.summaries is not None:
            await self.summaries.ledger_command(reply, action)
        elif action.name == "catchup" and self.catchup is not None:
            await self.catchup.command(reply, action, is_direct)
        else:
            await reply.finish(explanation)

    async def _summarized_file(self, reply: ReplyWriter) -> bool:
        replied = reply.message.reply_to
        return bool(self.files and replied and await self.files.summarize(reply, replied))

    async def _over_limit(
        self, reply: ReplyWriter, action: RunCommand, settings: Settings
    ) -> str | None:
        """A command that asks the model (a summary, of a year perhaps; a catch-up)
        counts as a question of its sender in its room; the others cost no model call,
        and `!forget` or turning a digest off must never be refused."""
        if self.limits is None or action.name not in MODEL_COMMANDS:
            return None
        guard, message = settings.guardrails, reply.message
        over = await self.limits.allows(
            {
                f"user:{message.sender}": guard.user_questions_per_minute,
                f"room:{message.room_id}": guard.room_questions_per_minute,
            }
        )
        if over is None:
            return None
        return strings.RATE_LIMITED["user" if over.startswith("user:") else "room"]

    async def _memory_reply(self, reply: ReplyWriter, action: RunCommand, prefix: str) -> str:
        assert self.memory is not None
        message = reply.message
        # Only what every reader of the room saw being remembered (history visibility).
        since = reply.audience.own_since() if reply.audience else None
        memories = (
            await self.memory.memories_for(message.room_id, message.sender, since)
            if since is not None
            else []
        )
        if action.name == "memory":
            return build_memory_list(memories, prefix)
        chosen = decide_forget(action.args, memories, prefix)
        if isinstance(chosen, str):
            return chosen
        count = await self.memory.forget(message.room_id, chosen)
        forgotten = [memory for memory in memories if memory.id in chosen]
        if count != len(forgotten):  # another process forgot some meanwhile
            return strings.FORGOTTEN.format(count=count)
        return build_forgotten(forgotten)
