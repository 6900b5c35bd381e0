"""Every write ends within the lease, on a real homeserver behind a proxy that holds what
the bot sends: a send the network holds past the lease's end is abandoned (it can no
longer land after a standby took over), and nothing of it reaches the room."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from nio import MessageDirection, RoomMessagesResponse

from bot.dev.synapse import free_port
from bot.matrix.login import connect
from bot.matrix.types import WriteRefused
from core.config import parse_config
from tests.e2e.conftest import PASSWORD, unique
from tests.e2e.people import membership_of

pytestmark = pytest.mark.e2e
LEASE_SECONDS = 2.0


class HoldingProxy:
    """A reverse proxy to the homeserver that, while `holding`, keeps each message send
    until released; a request whose client went away is never forwarded (as a request
    lost in a stalled network never arrives)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.holding = False
        self.held = asyncio.Event()
        # A held request whose client went away (its handler cancelled, never forwarded).
        self.dropped = asyncio.Event()
        self.release = asyncio.Event()
        self.forwarded: list[str] = []

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        if self.holding and "/send/m.room.message/" in request.path:
            self.held.set()
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.dropped.set()
                raise
        self.forwarded.append(f"{request.method} {request.path}")
        async with self.session.request(
            request.method,
            self.upstream + request.path_qs,
            data=await request.read(),
            headers={k: v for k, v in request.headers.items() if k.lower() != "host"},
        ) as answer:
            body = await answer.read()
            return web.Response(body=body, status=answer.status, content_type=answer.content_type)

    async def start(self) -> web.AppRunner:
        self.session = aiohttp.ClientSession()
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._forward)
        # A client that goes away cancels its request here, as it would in the network.
        runner = web.AppRunner(app, handler_cancellation=True)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", self.port).start()
        return runner


async def test_a_send_held_past_the_lease_is_abandoned_and_never_lands(
    homeserver, people, tmp_path: Path
):
    alice = await people("alice")
    proxy = HoldingProxy(homeserver.url)
    runner = await proxy.start()
    user_id = homeserver.register(unique("bot"), PASSWORD)
    config = (
        f'[matrix]\nhomeserver = "{proxy.url}"\nuser_id = "{user_id}"\n'
        f'password = "{PASSWORD}"\nencryption = false\n'
    )
    settings = parse_config(config, origin="test", env={}, base_dir=tmp_path)
    ends = time.monotonic() + 3600.0
    account = await connect(settings.matrix, tmp_path, lambda: ends - time.monotonic())
    try:
        room = await alice.create_room([user_id])
        assert await account.join(room)
        await account.sync(None, 0, True)  # the room is known: the fence lets text go
        await alice.wait_for(room, membership_of(user_id, "join"))
        await account.send(room, {"msgtype": "m.text", "body": "on time"})

        proxy.holding = True
        ends = time.monotonic() + LEASE_SECONDS
        started = time.monotonic()
        with pytest.raises(WriteRefused, match="lease ran out"):
            await account.send(room, {"msgtype": "m.text", "body": "too late"})
        assert time.monotonic() - started < LEASE_SECONDS + 1, "abandoned within the lease"
        assert proxy.held.is_set()
        # The bot closed the request: the proxy sees its client go (a send still waiting
        # would be forwarded at the release, and land).
        await asyncio.wait_for(proxy.dropped.wait(), 10)

        proxy.release.set()
        await alice.say(room, "sentinel")
        await alice.wait_for(room, lambda e: e["content"].get("body") == "sentinel")
        # The room's whole history as the homeserver keeps it (a sync may skip events).
        history = await alice.client.room_messages(
            room, start=alice.client.next_batch, direction=MessageDirection.back, limit=100
        )
        assert isinstance(history, RoomMessagesResponse), history
        bodies = [getattr(event, "body", None) for event in history.chunk]
        assert "sentinel" in bodies and "on time" in bodies and "too late" not in bodies
        with pytest.raises(WriteRefused, match="no longer holds"):
            await account.send(room, {"msgtype": "m.text", "body": "after the lease"})
    finally:
        await account.close()
        await proxy.session.close()
        await runner.cleanup()
