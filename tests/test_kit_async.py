"""AsyncKit against a running `agentlog serve`: fifty tasks at once on one client, and a connection cut
mid-batch, which must still leave each step in the chain exactly once."""

from __future__ import annotations

import asyncio

import httpx

from agentlog_kit import AsyncKit, Retry
from tests.kit_proxy import cutting_proxy
from tests.kit_reads import LiveShop

MIA = {"id": "mia", "name": "Mia"}
FAST = Retry(attempts=10, first_delay=0.01, max_delay=0.1)


async def steps(kit: AsyncKit, name: str, turns: int) -> str:
    async with kit.task("Estimator", "EstimateRepair", requester=MIA, about=name) as t:
        for turn in range(turns):
            await t.model_call("Everyday", input_tokens=turn, output_tokens=1, cost_micros=1,
                               messages=[{"role": "user", "content": f"{name} turn {turn}"}])
            call = await t.tool_call("PartsFor", tool_call_id=f"{name}-{turn}", input={"turn": turn})
            await call.result({"turn": turn})
        t.result = {"turns": turns}
    return t.id


def expected_kinds(turns: int) -> list[str]:
    return ["STARTED", *["MODEL_CALL", "TOOL_CALL", "TOOL_RESULT"] * turns, "ENDED"]


async def test_fifty_tasks_at_once_on_one_client(servers):
    shop = LiveShop(servers[0])
    async with AsyncKit(shop.url, shop.kit, batch_lines=7) as kit:
        await kit.register_agent("Estimator", purpose="Estimates bicycle repairs.")
        ids = await asyncio.gather(*(steps(kit, f"T-{n}", 5) for n in range(50)))
    assert len(set(ids)) == 50
    async with httpx.AsyncClient(timeout=30) as http:
        for n, task_id in enumerate(ids):
            read = await shop.aread(http, task_id)
            assert [line["kind"] for line in read["task"]["record"]] == expected_kinds(5)
            assert [line["toolCallId"] for line in read["task"]["record"] if line["kind"] == "TOOL_CALL"] == [
                f"T-{n}-{turn}" for turn in range(5)]
            assert read["task"]["status"] == "DONE" and read["verifyTrace"]["intact"]


async def test_a_server_that_drops_connections_mid_batch_records_each_step_once(servers):
    shop = LiveShop(servers[0])
    async with AsyncKit(shop.url, shop.kit) as kit:
        await kit.register_agent("Estimator", purpose="Estimates bicycle repairs.")
    async with cutting_proxy(servers[0].port, cut_every=3, refuse_every=4) as proxy:
        async with AsyncKit(f"http://127.0.0.1:{proxy.listen_port}", shop.kit, batch_lines=5, retry=FAST) as kit:
            ids = await asyncio.gather(*(steps(kit, f"T-{n}", 8) for n in range(3)))
    assert proxy.cuts >= 5
    async with httpx.AsyncClient(timeout=30) as http:
        for n, task_id in enumerate(ids):
            read = await shop.aread(http, task_id)
            record = read["task"]["record"]
            assert [line["kind"] for line in record] == expected_kinds(8)
            assert [line["seq"] for line in record] == list(range(1, len(record) + 1))
            assert [line["toolCallId"] for line in record if line["kind"] == "TOOL_CALL"] == [
                f"T-{n}-{turn}" for turn in range(8)]
            assert read["verifyTrace"] == {"intact": True, "lines": 26, "brokenAt": None, "problem": None}
            assert read["task"]["chainLength"] == 26 and read["task"]["status"] == "DONE"
