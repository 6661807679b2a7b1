"""The loop the sweeps and the webhook sender run in: under the server's settings, going on after a round that
fails (and saying so in the log), and ended, not left running, when the server stops."""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack

from models import settings
from resolvers.background import repeating

log = logging.getLogger("agentlog.test.background")
FAILED = "the test loop failed; it runs again"


async def test_a_round_that_fails_is_logged_and_the_loop_goes_on_under_the_settings_it_was_given(caplog):
    chosen = settings.load(otlp_wait_s=7)
    seen: list[float] = []
    went_on = asyncio.Event()

    async def work() -> None:
        seen.append(settings.current().otlp_wait_s)
        if len(seen) == 1:
            raise RuntimeError("the first round breaks")
        went_on.set()

    with caplog.at_level(logging.ERROR, logger=log.name):
        async with AsyncExitStack() as inside:
            await inside.enter_async_context(repeating(chosen, work, _next_turn, log, FAILED))
            await asyncio.wait_for(went_on.wait(), 30)
            await _leave(inside)

    assert seen[:2] == [7, 7]
    assert [(r.getMessage(), r.exc_info[0]) for r in caplog.records if r.name == log.name] == [(FAILED, RuntimeError)]


async def test_leaving_cancels_the_round_running_and_waits_for_it_to_end():
    started, ended = asyncio.Event(), []

    async def work() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            for _ in range(5):
                await asyncio.sleep(0)
            ended.append("cancelled")

    inside = AsyncExitStack()
    await inside.enter_async_context(repeating(settings.load(), work, _next_turn, log, FAILED))
    await asyncio.wait_for(started.wait(), 30)
    assert ended == []

    await _leave(inside)
    assert ended == ["cancelled"]


async def _next_turn() -> None:
    await asyncio.sleep(0)


async def _leave(inside: AsyncExitStack) -> None:
    """Leaves the loop; a loop that leaving does not end fails the test rather than hang it (shielded, so the
    timeout cannot cancel the loop in its place)."""
    await asyncio.wait_for(asyncio.shield(inside.aclose()), 30)
