"""The database goes away and comes back, twice, while eight writers append to one tree: on a PostgreSQL cluster
of the test's own, restarted once in fast and once in immediate mode, under a real `agentlog serve`."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import asyncpg
import httpx
import pytest

from permissions.tokens import issue_token
from tests.pg_cluster import Cluster
from tests.servers import start_server

pytestmark = pytest.mark.postgres_only

WRITERS = 8
REQUEST_TIMEOUT_S = 10
READY_WITHIN_S = 60
TENANT = "shop"
KIT = issue_token("agent-kit", TENANT, kit=True)
NOOR = issue_token("noor", TENANT, roles=["Auditor"], name="Noor")
TOOL = "mutation($input: ToolCallInput!) { recordToolCall(input: $input) { seq } }"


@dataclass
class Writer:
    number: int
    acknowledged: list[str] = field(default_factory=list)
    unavailable: int = 0
    slowest_s: float = 0.0
    other_errors: list[object] = field(default_factory=list)


@pytest.fixture
async def outage_server():
    cluster = Cluster()
    server = None
    try:
        cluster.start()
        admin = await asyncpg.connect(f"{cluster.url}/postgres")
        try:
            await admin.execute("CREATE DATABASE agentlog")
        finally:
            await admin.close()
        server = start_server(f"{cluster.url}/agentlog")
        yield cluster, server
    finally:
        if server is not None:
            server.stop()
        cluster.remove()


async def graphql(http: httpx.AsyncClient, query: str, variables: dict | None = None, token: str = KIT) -> dict:
    response = await http.post("/graphql", json={"query": query, "variables": variables or {}},
                               headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return response.json()


async def write_until_told(http: httpx.AsyncClient, task: str, writer: Writer, stop: asyncio.Event) -> None:
    """Appends lines, each retried with its own idempotency key until it is acknowledged."""
    line = 0
    while not stop.is_set():
        line += 1
        key = f"w{writer.number}-{line}"
        input = {"task": task, "tool": "PartsFor", "toolCallId": key, "input": {"line": key},
                 "summary": f"Writer {writer.number} wrote line {key}.", "idempotencyKey": key}
        while True:
            began = time.monotonic()
            body = await graphql(http, TOOL, {"input": input})
            writer.slowest_s = max(writer.slowest_s, time.monotonic() - began)
            if not body.get("errors"):
                writer.acknowledged.append(key)
                break
            codes = {error["extensions"]["code"] for error in body["errors"]}
            if codes != {"UNAVAILABLE"}:
                writer.other_errors.append(body["errors"])
                return
            writer.unavailable += 1
            await asyncio.sleep(0.1)


async def each_writes_more(writers: list[Writer], lines: int) -> None:
    goals = [len(writer.acknowledged) + lines for writer in writers]
    async with asyncio.timeout(READY_WITHIN_S):
        while any(len(w.acknowledged) < goal and not w.other_errors for w, goal in zip(writers, goals)):
            await asyncio.sleep(0.05)


async def while_down(http: httpx.AsyncClient) -> None:
    """Every kind of request answers UNAVAILABLE promptly, outside GraphQL with when to try again; liveness still
    answers."""
    ready = await http.get("/readyz")
    assert ready.status_code == 503 and ready.json()["errors"][0]["extensions"]["code"] == "UNAVAILABLE"
    assert ready.headers["retry-after"] == "1"
    body = await graphql(http, "{ tasks(first: 1) { edges { node { id } } } }", token=NOOR)
    assert body["errors"][0]["extensions"]["code"] == "UNAVAILABLE", body
    rest = await http.get("/agentic/observability/sessions/s-1/transcript", headers={"Authorization": f"Bearer {NOOR}"})
    assert rest.status_code == 503 and rest.json()["errors"][0]["extensions"]["code"] == "UNAVAILABLE", rest.text
    assert rest.headers["retry-after"] == "1"
    assert (await http.get("/healthz")).status_code == 200


async def ready_again(http: httpx.AsyncClient) -> None:
    async with asyncio.timeout(READY_WITHIN_S):
        while (await http.get("/readyz")).status_code != 200:
            await asyncio.sleep(0.2)


async def test_writes_survive_two_restarts_of_the_database(outage_server):
    cluster, server = outage_server
    async with httpx.AsyncClient(base_url=server.url, timeout=REQUEST_TIMEOUT_S) as http:
        assert (await http.get("/readyz")).json() == {"status": "ready"}
        await graphql(http, 'mutation { registerAgent(input: {name: "Estimator"}) { name } }')
        await graphql(http, 'mutation { definePolicies(input: {auditsAgents: ["Auditor"]}) { auditsAgents } }')
        started = await graphql(http, 'mutation { startTask(input: {agent: "Estimator", skill: "EstimateRepair", '
                                      'actor: {id: "estimator"}, requester: {id: "mia"}}) { id } }')
        task = started["data"]["startTask"]["id"]

        writers = [Writer(number) for number in range(WRITERS)]
        stop = asyncio.Event()
        writing = [asyncio.create_task(write_until_told(http, task, writer, stop)) for writer in writers]
        try:
            await each_writes_more(writers, 5)
            for mode in ("fast", "immediate"):
                await asyncio.to_thread(cluster.stop, mode)
                await while_down(http)
                await asyncio.sleep(1)
                await asyncio.to_thread(cluster.start)
                await ready_again(http)
                await each_writes_more(writers, 5)
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*writing), READY_WITHIN_S * 2)

        failures = [w.other_errors for w in writers if w.other_errors]
        assert not failures, (failures, "\n".join(server.log[-200:]))
        assert max(w.slowest_s for w in writers) < REQUEST_TIMEOUT_S
        assert sum(w.unavailable for w in writers) > 0
        check = await graphql(http, "query($id: ID!) { verifyTrace(task: $id) { intact lines problem } "
                                    "task(id: $id) { chainLength record { kind summary } } }", {"id": task}, NOOR)

    acknowledged = [key for writer in writers for key in writer.acknowledged]
    record = check["data"]["task"]["record"]
    written = [line["summary"].split()[-1].rstrip(".") for line in record if line["kind"] == "TOOL_CALL"]
    assert check["data"]["verifyTrace"]["intact"] is True, check["data"]["verifyTrace"]
    assert check["data"]["verifyTrace"]["lines"] == check["data"]["task"]["chainLength"] == len(record)
    assert len(written) == len(set(written)), "a retried write was recorded twice"
    assert sorted(written) == sorted(acknowledged)
