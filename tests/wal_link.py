"""The replication link between a primary and its standby, run through the test: while stalled, the WAL the primary
sends is held back from the standby (as on a slow or congested network); cut, every connection is closed and what
was held is gone, as the WAL in flight is when the primary's host dies."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class WalLink:
    def __init__(self, primary_port: int) -> None:
        self.primary_port = primary_port
        self.port = 0
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.writers: list[asyncio.StreamWriter] = []

    async def handle(self, standby_reader: asyncio.StreamReader, standby_writer: asyncio.StreamWriter) -> None:
        try:
            primary_reader, primary_writer = await asyncio.open_connection("127.0.0.1", self.primary_port)
        except OSError:
            await self.close(standby_writer)
            return
        self.writers += [standby_writer, primary_writer]

        async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, held: bool) -> None:
            while chunk := await reader.read(65536):
                if held:
                    await self.flowing.wait()
                writer.write(chunk)
                await writer.drain()

        pumps = [asyncio.ensure_future(pump(standby_reader, primary_writer, False)),
                 asyncio.ensure_future(pump(primary_reader, standby_writer, True))]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            pass
        finally:
            for running in pumps:
                running.cancel()
            await self.close(standby_writer, primary_writer)

    def stall(self) -> None:
        self.flowing.clear()

    async def cut(self) -> None:
        await self.close(*self.writers)

    async def close(self, *writers: asyncio.StreamWriter) -> None:
        for writer in writers:
            writer.transport.abort()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()


@asynccontextmanager
async def wal_link(primary_port: int) -> AsyncIterator[WalLink]:
    link = WalLink(primary_port)
    listener = await asyncio.start_server(link.handle, "127.0.0.1", 0)
    link.port = listener.sockets[0].getsockname()[1]
    try:
        yield link
    finally:
        listener.close()
        await link.cut()
        await listener.wait_closed()
