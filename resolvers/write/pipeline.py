"""Statements for one connection sent in order by a task of their own, while the caller goes on computing: the
database works on one core while Python works on the other."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from types import TracebackType
from typing import Any


class Pipeline:
    """Within the block the caller must not use the connection itself, only `send` to it, until `drain` returns.
    Leaving the block waits for every statement sent, so a transaction never ends under one still running; the
    first failure is raised by `drain`, or, should the block itself fail, set aside for the block's own."""

    def __init__(self) -> None:
        self._last: asyncio.Future[Any] | None = None

    def send(self, statement: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        """Queues the statement after those sent before it; the future it returns holds its result."""
        before = self._last

        async def after() -> Any:
            if before is not None:
                try:
                    await before
                except BaseException:
                    statement.close()
                    raise
            return await statement

        self._last = asyncio.ensure_future(after())
        return self._last

    async def breathe(self) -> None:
        """Lets statements sent go on while the caller computes: one turn of the event loop, if any are out."""
        if self._last is not None and not self._last.done():
            await asyncio.sleep(0)

    async def drain(self) -> None:
        last, self._last = self._last, None
        if last is not None:
            await last

    async def __aenter__(self) -> Pipeline:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        if error is None:
            await self.drain()
            return
        with contextlib.suppress(BaseException):
            await self.drain()
