"""The kit sends back, with each call, the consistency token its latest write was answered with."""

from __future__ import annotations

import json

import httpx

from agentlog_kit import AsyncKit

TASK = "7c0b2a4e-0000-4000-8000-000000000001"
HEADER = "X-Agentlog-Consistency"


async def test_each_call_carries_the_token_of_the_write_before_it():
    sent: list[str | None] = []
    tokens = iter(["0/10", "0/20"])

    def server(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers.get(HEADER))
        body = json.loads(request.content)
        if body["query"].startswith("query"):
            return httpx.Response(200, json={"data": {"task": {"id": TASK}}})
        name = body["query"].split("{", 2)[1].split("(")[0].strip()
        return httpx.Response(200, json={"data": {name: {"id": TASK}}}, headers={HEADER: next(tokens)})

    async with AsyncKit("http://agentlog.test", "kit-token", transport=httpx.MockTransport(server)) as kit:
        assert kit.consistency is None
        task = await kit.start_task("Estimator", "EstimateRepair")
        await task.end()
        assert kit.consistency == "0/20"
        read = await kit.query("query($id: ID!) { task(id: $id) { id } }", {"id": TASK})

    assert read == {"task": {"id": TASK}}
    assert sent == [None, "0/10", "0/20"]
