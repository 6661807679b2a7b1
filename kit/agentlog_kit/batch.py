"""The lines of one task waiting for `recordLines`: sent in order, when enough wait, after a pause, or when asked."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from agentlog_kit.errors import AgentlogError, Answered, Unavailable

Send = Callable[[list[dict[str, Any]], str], Awaitable[None]]


class Batches:
    """Lines are cut into batches of at most `size`, each given its idempotency key when it is cut, and sent one
    at a time in order. A batch the server could not be reached for stays first in line with its key, so sending
    it again never writes it twice. A batch the server refused wrote nothing: its error, carrying the lines, is
    raised by the next call, whether the refused send was the caller's or the background's. A batch recorded
    with an answer to heed (`Answered`, such as `StopAsked`) is raised the same way, and is not sent again."""

    def __init__(self, send: Send, size: int, after: float) -> None:
        self.send = send
        self.size = size
        self.after = after
        self.waiting: list[dict[str, Any]] = []
        self.cut: list[tuple[str, list[dict[str, Any]]]] = []
        self.lock = asyncio.Lock()
        self.timer: asyncio.TimerHandle | None = None
        self.background: set[asyncio.Task[None]] = set()
        self.refused: AgentlogError | None = None

    def raise_refused(self) -> None:
        if self.refused is not None:
            refused, self.refused = self.refused, None
            raise refused

    async def add(self, line: dict[str, Any]) -> None:
        self.raise_refused()
        self.waiting.append(line)
        if len(self.waiting) >= self.size:
            await self.flush()
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(self.after, self.flush_in_background)

    @property
    def pending(self) -> int:
        return len(self.waiting) + sum(len(lines) for _, lines in self.cut)

    def flush_in_background(self) -> None:
        self.timer = None
        task = asyncio.ensure_future(self.background_flush())
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def background_flush(self) -> None:
        try:
            await self.send_all()
        except Unavailable:
            if self.pending and self.timer is None:
                self.timer = asyncio.get_running_loop().call_later(self.after, self.flush_in_background)
        except AgentlogError as refused:
            self.refused = refused

    async def flush(self) -> None:
        """Sends everything waiting; raises what the server refused, here or earlier in the background."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        try:
            await self.send_all()
        except AgentlogError as refused:
            if isinstance(refused, Unavailable):
                raise
            self.refused = refused
        self.raise_refused()

    async def send_all(self) -> None:
        async with self.lock:
            while self.waiting:
                lines, self.waiting = self.waiting[:self.size], self.waiting[self.size:]
                self.cut.append((str(uuid.uuid4()), lines))
            while self.cut:
                key, lines = self.cut[0]
                try:
                    await self.send(lines, key)
                except AgentlogError as refused:
                    if not isinstance(refused, Unavailable):
                        self.cut.pop(0)
                    if not isinstance(refused, (Unavailable, Answered)):
                        refused.lines = lines
                    raise
                self.cut.pop(0)

    async def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        for task in list(self.background):
            task.cancel()
