"""Retention: work whose root ended more than its tenant's `retainDays` ago is forgotten, exactly as
`forgetAgentWork` forgets it (meter kept and detached), each forgetting logged with `by: "retention"`; and
idempotency keys older than AGENTLOG_IDEMPOTENCY_DAYS are dropped.

One process sweeps at a time; the others skip their turn. A tree with a task still running is left for a
later sweep; a held tree is left whole until its hold is released.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from tortoise.expressions import F
from tortoise.transactions import in_transaction

from models import AgentTask, IdempotencyKey, TenantPolicies, db, settings
from models.errors import Forbidden, NotFound, WorkRunning
from models.settings import Settings
from permissions.principal import Principal
from resolvers.background import repeating
from resolvers.events import replicas
from resolvers.forget.erasure import ended_tree, forget_tree, owe_erased
from resolvers.events.notices import publish_task
from resolvers.write.append import now

log = logging.getLogger("agentlog.retention")
BY = "retention"
PAGE = 500


@dataclass(frozen=True, slots=True)
class Swept:
    trees: int
    keys: int


def retainer(tenant: str) -> Principal:
    return Principal(sub=BY, tenant=tenant, name=BY)


async def expired_roots(tenant: str, before: datetime) -> AsyncIterator[str]:
    """The ids of the tenant's roots that ended before `before`, read in pages in id order."""
    after = None
    while True:
        query = AgentTask.filter(tenant=tenant, id=F("root_id"), ended_at__lt=before)
        if after is not None:
            query = query.filter(id__gt=after)
        page = await query.order_by("id").limit(PAGE).values_list("id", flat=True)
        for root_id in page:
            yield str(root_id)
        if len(page) < PAGE:
            return
        after = page[-1]


async def forget_expired(tenant: str, days: int, at: datetime) -> int:
    """Forgets the tenant's trees whose root ended more than `days` before `at`; returns how many."""
    forgotten = 0
    why = f"The tenant keeps work {days} days after it ends."
    async for root_id in expired_roots(tenant, at - timedelta(days=days)):
        try:
            async with in_transaction() as conn:
                task, root = await ended_tree(tenant, root_id, conn)
                await forget_tree(task, root, retainer(tenant), at, why, conn, BY)
                await owe_erased(conn, task)
        except (NotFound, WorkRunning, Forbidden):
            continue
        await publish_task("AgentWorkErased", task)
        if (reads := replicas.routing()) is not None:
            await reads.fence(tenant, answering=False)
        forgotten += 1
    return forgotten


async def sweep(at: datetime | None = None, wait: bool = False) -> Swept | None:
    """One sweep as of `at` (now by default); None when another process holds the sweep."""
    at = at or now()
    async with db.one_at_a_time(wait) as mine:
        if not mine:
            return None
        trees = 0
        for policies in await TenantPolicies.filter(retain_days__isnull=False):
            trees += await forget_expired(policies.tenant, policies.retain_days, at)
        keys = await IdempotencyKey.filter(created_at__lt=at - timedelta(days=settings.idempotency_days())).delete()
    if trees or keys:
        log.info("retention forgot %d trees and %d idempotency keys", trees, keys)
    return Swept(trees, keys)


@asynccontextmanager
async def sweeping(chosen: Settings) -> AsyncIterator[None]:
    """Sweeps now and every AGENTLOG_RETENTION_SWEEP_S seconds while inside, under the server's settings."""
    seconds = chosen.retention_sweep_s

    async def pause() -> None:
        await asyncio.sleep(seconds)

    async with repeating(chosen, sweep, pause, log, "the retention sweep failed; it runs again in %d s" % seconds):
        yield
