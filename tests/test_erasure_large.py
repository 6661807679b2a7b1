"""Large trees are erased in bounded memory, in one transaction: a half-done erasure is never seen."""

from __future__ import annotations

import asyncio
import tracemalloc
import uuid
from collections.abc import Awaitable
from datetime import datetime, timedelta, timezone
from typing import Any

from tortoise.transactions import in_transaction

import resolvers.forget.erasure
from models import AgentTask, ErasureRecord, TraceEvent
from resolvers.write.append import append_many, step_of
from tests.shop import Shop
from tests.test_erasure import erase, priya, refused, repair_job

LINES = 50_000
BATCH = 5_000
KINDS = ("MODEL_CALL", "TOOL_CALL", "TOOL_RESULT")
MEMORY_BOUND = 8 * 1024 * 1024


def line(task: uuid.UUID, seq: int, at: datetime) -> TraceEvent:
    kind = KINDS[seq % 3]
    return TraceEvent(
        kind=kind, task_id=task, at=at + timedelta(microseconds=seq),
        summary=f"Step {seq} of a long estimate.", payload=f'{{"step":{seq},"note":"{"brake pads " * 20}"}}',
        model="Everyday" if kind == "MODEL_CALL" else None, cost_micros=200 if kind == "MODEL_CALL" else None,
        tool=None if kind == "MODEL_CALL" else "PartsFor",
    )


async def long_tree(tenant: str, lines: int = LINES) -> AgentTask:
    """A finished root with `lines` lines, appended through the write path in batches."""
    at, rid = datetime.now(timezone.utc), uuid.uuid4()
    root = await AgentTask.create(
        id=rid, tenant=tenant, agent="Estimator", skill="EstimateRepair", cause="REQUEST", actor_id="estimator",
        status="DONE", started_at=at, ended_at=at, root_id=rid, depth=0, sequence=1, path=str(rid),
    )
    for start in range(1, lines + 1, BATCH):
        steps = [step_of(line(root.id, seq, at)) for seq in range(start, min(start + BATCH, lines + 1))]
        async with in_transaction() as conn:
            await append_many(root, steps, conn)
    return root


async def peak_memory(work: Awaitable[Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = await work
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


async def test_a_tree_of_fifty_thousand_lines_is_erased_in_bounded_memory(client):
    shop = Shop(client)
    await shop.setup()
    root = await long_tree(shop.tenant)
    task = str(root.id)

    erased, peak = await peak_memory(erase(shop, "eraseAgentWorkContent", task))
    assert erased == LINES and peak < MEMORY_BOUND, peak
    anonymised, peak = await peak_memory(erase(shop, "anonymiseAgentWork", task))
    assert anonymised == LINES + 1 and peak < MEMORY_BOUND, peak

    check = await shop.verify(task)
    assert check == {"intact": True, "lines": LINES + 2, "brokenAt": None, "problem": None, "erased": LINES + 1}
    assert not await TraceEvent.filter(root_id=root.id, payload_salt__isnull=False, kind__not="ERASED").exists()

    forgotten, peak = await peak_memory(erase(shop, "forgetAgentWork", task))
    assert forgotten == 1 and peak < MEMORY_BOUND, peak
    assert not await TraceEvent.filter(root_id=root.id).exists()


async def test_an_erasure_that_fails_part_way_leaves_nothing_changed(client, monkeypatch):
    shop = Shop(client)
    await shop.setup()
    job = await repair_job(shop)
    before = await shop.verify(job.root)

    async def broken(*args: Any) -> None:
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(resolvers.forget.erasure, "append", broken)
    for mutation in ("eraseAgentWorkContent", "anonymiseAgentWork"):
        error = await refused(shop, mutation, job.child, priya(shop))
        assert error["extensions"]["code"] == "INTERNAL"
    monkeypatch.undo()

    assert await shop.verify(job.root) == before and before["erased"] == 0
    receipt = await shop.read(job.root, shop.mia, "given about requester { id } record { summary contentAccess }")
    assert receipt["given"] and receipt["about"] and receipt["requester"] == {"id": "mia"}
    assert all(line["contentAccess"] == "SHOWN" and line["summary"] != "Erased." for line in receipt["record"])
    assert not await ErasureRecord.filter(tenant=shop.tenant).exists()


async def test_erasures_of_one_tree_at_once_are_serialised_into_one_chain(client):
    shop = Shop(client)
    await shop.setup()
    job = await repair_job(shop)

    await asyncio.gather(
        erase(shop, "eraseAgentWorkContent", job.root),
        erase(shop, "anonymiseAgentWork", job.child),
        erase(shop, "eraseAgentWorkContent", job.child),
    )

    lines = await TraceEvent.filter(root_id=job.root).order_by("seq").values_list("seq", "kind")
    assert [seq for seq, _ in lines] == list(range(1, 15))
    assert [kind for _, kind in lines[11:]] == ["ERASED"] * 3
    check = await shop.verify(job.root)
    assert check["intact"] and check["lines"] == 14
