"""A TCP relay for tests: connections to its port are piped to an upstream port until the
test cuts it, as a network between a process and its database fails."""

from __future__ import annotations

import asyncio
import contextlib

from bot.dev.synapse import free_port


class TcpRelay:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = free_port()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.cut_off = False

    async def start(self) -> TcpRelay:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)
        return self

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut_off:
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        self._writers |= {writer, up_writer}

        async def pipe(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await source.read(1 << 16):
                    target.write(data)
                    await target.drain()
            target.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut(self) -> None:
        """Close every connection and refuse new ones."""
        self.cut_off = True
        for writer in self._writers:
            writer.close()

    async def stop(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
