"""`!sources`: the one command of this feature, answered from the config and the room's
readers as they are now."""

from __future__ import annotations

from bot.features.feature import Feature
from bot.features.sources.listing import build_sources_reply
from bot.inbox.decisions import ListSources
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.reply import ReplyWriter
from bot.settings_holder import SettingsHolder
from core.ids import RoomID, UserID


class SourcesDesk(Feature):
    def __init__(self, settings: SettingsHolder) -> None:
        self.settings = settings

    def register(self, dispatcher: Dispatcher) -> None:
        """The command this feature runs."""
        dispatcher.on_command(ListSources, self.list_sources)

    async def list_sources(self, reply: ReplyWriter, decision: ListSources) -> None:
        message, audience = reply.message, reply.audience
        text = build_sources_reply(
            self.settings.current,
            RoomID(message.room_id),
            UserID(message.sender),
            tuple(sorted(audience.readers)) if audience else (),
            # Decided at sync time, and still so for the readers as they are now.
            is_direct=decision.direct and audience is not None and len(audience.readers) <= 1,
            open_room=audience.open_room if audience else True,
        )
        await reply.finish(text)
