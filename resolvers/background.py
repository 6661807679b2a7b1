"""A loop the server runs while it serves (the OTLP sweep, the retention sweep, the webhook sender): started on
startup under the server's settings, a round then a pause over and over, a round that fails logged and the loop
going on, and on shutdown cancelled and awaited, so nothing is left running."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from models.settings import Settings, using


@asynccontextmanager
async def repeating(chosen: Settings, work: Callable[[], Awaitable[object]], pause: Callable[[], Awaitable[object]],
                    log: logging.Logger, failed: str) -> AsyncIterator[None]:
    """While inside: `work`, then `pause`, over and over, under `chosen`; when `work` raises, it is logged on `log`
    as `failed` and the pause and the next round follow as after any other."""

    async def loop() -> None:
        while True:
            try:
                await work()
            except Exception:
                log.exception(failed)
            await pause()

    with using(chosen):
        task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
