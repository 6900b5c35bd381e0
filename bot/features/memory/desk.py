"""`!memory` and `!forget`: what the bot remembers in a room, and forgetting it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.features.feature import Feature, FollowedEdit
from bot.features.memory.commands import build_forgotten, build_memory_list, decide_forget
from bot.inbox.decisions import Forget, ListMemories
from bot.inbox.dispatcher import Dispatcher
from bot.inbox.reply import ReplyWriter
from bot.settings_holder import SettingsHolder
from core import strings
from core.ids import EventID, RoomID
from core.memory.memory import ConversationMemory
from core.memory.store import Memory


class MemoryDesk(Feature):
    """The memories and conversation turns of the rooms, and the rooms' history index
    (core/memory): the commands that show and forget memories, and the life-cycle of
    what they keep."""

    def __init__(
        self,
        memory: ConversationMemory,
        settings: SettingsHolder,
        settled: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.memory = memory
        self.settings = settings
        # Waits until the lines before an edit or a redaction are in the history.
        self.settled = settled

    async def follow_edit(self, edit: FollowedEdit) -> None:
        await self._settled()
        await self.memory.follow_edit(
            edit.room_id, edit.original, edit.sender, edit.text, edit.edit_event
        )

    async def forget_message(
        self, room_id: RoomID, event_id: EventID, said_at: float | None
    ) -> None:
        """A redacted message leaves the history windows; the memories and conversation
        turns made from it are forgotten."""
        await self._settled()
        await self.memory.follow_redaction(room_id, event_id, said_at)

    async def purge_room_before(self, room_id: RoomID, cutoff: float) -> None:
        await self.memory.store.purge_turns_before(room_id, cutoff)
        if self.memory.history is not None:
            await self.memory.history.purge_before(room_id, cutoff)

    async def erase_freed(self) -> None:
        await self.memory.store.erase_freed()

    async def _settled(self) -> None:
        if self.settled is not None:
            await self.settled()

    def register(self, dispatcher: Dispatcher) -> None:
        """The commands this feature runs."""
        dispatcher.on_command(ListMemories, self.list_memories)
        dispatcher.on_command(Forget, self.forget)

    async def list_memories(self, reply: ReplyWriter, decision: ListMemories) -> None:
        """!memory: numbered as `!forget` takes them."""
        prefix = self.settings.current.bot.command_prefix
        await reply.finish(build_memory_list(await self._memories(reply), prefix))

    async def forget(self, reply: ReplyWriter, decision: Forget) -> None:
        """!forget <number>|all."""
        prefix = self.settings.current.bot.command_prefix
        memories = await self._memories(reply)
        chosen = decide_forget(decision.scope, memories, prefix)
        if isinstance(chosen, str):
            await reply.finish(chosen)
            return
        count = await self.memory.forget(reply.message.room_id, chosen)
        forgotten = [memory for memory in memories if memory.id in chosen]
        if count != len(forgotten):  # another process forgot some meanwhile
            await reply.finish(strings.FORGOTTEN.format(count=count))
            return
        await reply.finish(build_forgotten(forgotten))

    async def _memories(self, reply: ReplyWriter) -> list[Memory]:
        """Only what every reader of the room saw being remembered (history visibility)."""
        message = reply.message
        since = reply.audience.own_since() if reply.audience else None
        if since is None:
            return []
        return await self.memory.memories_for(message.room_id, message.sender, since)
