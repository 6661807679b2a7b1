"""A TCP proxy between a client and `agentlog serve` that cuts connections: every `cut_every`-th piece the
server sends back is dropped and both sides are closed, so the server has done the work and the client never
hears of it; every `refuse_every`-th request is cut before it reaches the server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class CuttingProxy:
    def __init__(self, port: int, cut_every: int, refuse_every: int) -> None:
        self.port = port
        self.cut_every = cut_every
        self.refuse_every = refuse_every
        self.answers = 0
        self.requests = 0
        self.cuts = 0
        self.listen_port = 0

    async def handle(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.port)

        async def upstream() -> None:
            while chunk := await client_reader.read(65536):
                self.requests += 1
                if self.requests % self.refuse_every == 0:
                    self.cuts += 1
                    return
                server_writer.write(chunk)
                await server_writer.drain()

        async def downstream() -> None:
            while chunk := await server_reader.read(65536):
                self.answers += 1
                if self.answers % self.cut_every == 0:
                    self.cuts += 1
                    return
                client_writer.write(chunk)
                await client_writer.drain()

        try:
            pumps = [asyncio.ensure_future(upstream()), asyncio.ensure_future(downstream())]
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for pump in pumps:
                pump.cancel()
        finally:
            for writer in (client_writer, server_writer):
                writer.close()
                with contextlib.suppress(ConnectionError):
                    await writer.wait_closed()


@asynccontextmanager
async def cutting_proxy(port: int, cut_every: int = 3, refuse_every: int = 5) -> AsyncIterator[CuttingProxy]:
    proxy = CuttingProxy(port, cut_every, refuse_every)
    listener = await asyncio.start_server(proxy.handle, "127.0.0.1", 0)
    proxy.listen_port = listener.sockets[0].getsockname()[1]
    try:
        yield proxy
    finally:
        listener.close()
        await listener.wait_closed()
