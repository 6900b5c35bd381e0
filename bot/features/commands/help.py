"""`!help` (or a bare mention) and the explanation of a command that does not run here."""

from __future__ import annotations

from bot.features.feature import Feature
from bot.inbox.commands import build_command_explanation, build_help, decide_abilities
from bot.inbox.decisions import ExplainCommand, ShowHelp
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.reply import ReplyWriter
from bot.settings_holder import SettingsHolder


class HelpDesk(Feature):
    def __init__(self, settings: SettingsHolder) -> None:
        self.settings = settings

    def register(self, dispatcher: Dispatcher) -> None:
        """The commands this feature runs (always on: help works where commands are off)."""
        dispatcher.on_command(ShowHelp, self.help)
        dispatcher.on_command(ExplainCommand, self.explain)

    async def help(self, reply: ReplyWriter, decision: ShowHelp) -> None:
        settings = self.settings.current
        room = settings.room(reply.message.room_id)
        prefix = settings.bot.command_prefix
        abilities = decide_abilities(settings)
        await reply.finish(build_help(room, prefix, decision.direct, abilities))

    async def explain(self, reply: ReplyWriter, decision: ExplainCommand) -> None:
        text = build_command_explanation(
            self.settings.current, reply.message.room_id, decision.name
        )
        await reply.finish(text)
