"""The sweep: traces whose placing failed are tried again on its next round; spans that have waited
`AGENTLOG_OTLP_WAIT_S` for an agent parent are placed under their trace's stand-in; on start, every span still
waiting is tried, so nothing acknowledged before a crash stays unplaced. Then tasks start markers opened whose
trace has had no span as long are ended (`unreported`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timezone

from tortoise.connection import get_connection

from models import settings
from models.settings import Settings
from resolvers.background import repeating
from resolvers.otlp import store as waiting_spans
from resolvers.otlp.ingest import AGAIN, micros, place_trace
from resolvers.otlp.unreported import end_unreported

log = logging.getLogger("agentlog.otlp")


async def sweep(now: datetime | None = None, everything: bool = False) -> int:
    """Places what can be placed of the traces whose placing failed, then the spans that have waited long enough;
    with `everything` (on start), every span still waiting. Returns the traces tried."""
    when = now or datetime.now(timezone.utc)
    wait_s = settings.otlp_wait_s()
    again = AGAIN.take()
    for tenant, trace_id in again:
        await _try(tenant, trace_id, when, wait_s, every_waiting=True)
    since_us = micros(when) - (0 if everything else int(wait_s * 1_000_000))
    traces = await waiting_spans.waiting_traces(get_connection("default"), since_us)
    for tenant, trace_id in traces:
        await _try(tenant, trace_id, when, wait_s, every_waiting=everything)
    quiet_us = micros(when) - int(wait_s * 1_000_000)
    quiet = await waiting_spans.quiet_traces(get_connection("default"), quiet_us)
    for tenant, trace_id in quiet:
        try:
            await end_unreported(tenant, trace_id, when, quiet_us)
        except Exception:
            log.exception("could not end the unreported tasks of trace %s yet; they are tried again", trace_id)
    return len(again) + len(traces) + len(quiet)


async def _try(tenant: str, trace_id: str, when: datetime, wait_s: float, every_waiting: bool) -> None:
    try:
        await place_trace(tenant, trace_id, when, wait_s, every_waiting=every_waiting)
    except Exception:
        AGAIN.add(tenant, trace_id)
        log.exception("could not place trace %s yet; it stays stored and is tried again", trace_id)


@asynccontextmanager
async def sweeping(chosen: Settings) -> AsyncIterator[None]:
    """While the server runs, under its settings: on start, every trace with spans not yet placed; then, over and
    over, the spans that have waited AGENTLOG_OTLP_WAIT_S."""
    everything = True

    async def work() -> None:
        nonlocal everything
        await sweep(everything=everything)
        everything = False

    async def pause() -> None:
        await asyncio.sleep(min(5.0, max(0.05, chosen.otlp_wait_s / 4)))

    async with repeating(chosen, work, pause, log, "the sweep of waiting spans failed; it runs again"):
        yield
