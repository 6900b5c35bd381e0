"""A nio sync response as the bot's SyncBatch: events as their JSON, invites, receipts."""

from __future__ import annotations

from nio import InviteMemberEvent, MegolmEvent, ReceiptEvent, SyncResponse

from bot.matrix.types import Invite, JoinedRoomBatch, ReadReceipt, SyncBatch
from core.ids import RoomID, UserID


def build_sync_batch(response: SyncResponse, bot_user: str) -> SyncBatch:
    """Undecryptable events are left out (the account reports them), only their times
    kept."""
    joined = [
        JoinedRoomBatch(
            RoomID(room_id),
            [dict(event.source) for event in info.state],
            [
                dict(event.source)
                for event in info.timeline.events
                if not isinstance(event, MegolmEvent)
            ],
            bool(info.timeline.limited),
            info.timeline.prev_batch,
            [
                event.server_timestamp
                for event in info.timeline.events
                if isinstance(event, MegolmEvent)
            ],
        )
        for room_id, info in response.rooms.join.items()
    ]
    return SyncBatch(
        response.next_batch,
        joined,
        _invites(response, bot_user),
        [RoomID(room_id) for room_id in response.rooms.leave],
        _receipts(response, bot_user),
    )


def _invites(response: SyncResponse, bot_user: str) -> list[Invite]:
    found = []
    for room_id, info in response.rooms.invite.items():
        invite = next(
            (
                event
                for event in info.invite_state
                if isinstance(event, InviteMemberEvent)
                and event.state_key == bot_user
                and event.membership == "invite"
            ),
            None,
        )
        found.append(
            Invite(
                RoomID(room_id),
                UserID(invite.sender) if invite else None,
                bool(invite and invite.content.get("is_direct")),
            )
        )
    return found


def _receipts(response: SyncResponse, bot_user: str) -> list[ReadReceipt]:
    """The main-timeline read receipts (not the bot's own, not of threads)."""
    found = []
    for room_id, info in response.rooms.join.items():
        for event in info.ephemeral:
            if not isinstance(event, ReceiptEvent):
                continue
            for receipt in event.receipts:
                main = receipt.thread_id in (None, "main")
                if receipt.receipt_type == "m.read" and main and receipt.user_id != bot_user:
                    found.append(
                        ReadReceipt(room_id, receipt.user_id, receipt.event_id, receipt.timestamp)
                    )
    return found
