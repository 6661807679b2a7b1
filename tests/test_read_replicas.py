"""Reads from a streaming replica: a primary and a hot standby of the test's own (initdb, pg_basebackup -R), and
two real `agentlog serve` processes reading from it. Which node answered is read off each server's /metrics."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from unittest import mock

import httpx
import pytest
from agentlog_kit import AsyncKit
from prometheus_client.parser import text_string_to_metric_families

from tests.pg_cluster import Cluster
from tests.pg_replicas import Standby, primary_and_standbys, reads_by_node
from tests.servers import Server, start_server, subscribed
from tests.shop import Client, Shop

pytestmark = pytest.mark.postgres_only

MAX_LAG_S = 1
HEADER = "X-Agentlog-Consistency"
CONTENT = "given record { payload }"


@dataclass
class Replicated:
    primary: Cluster
    standby: Standby
    servers: list[Server]

    @property
    def first(self) -> Server:
        return self.servers[0]


@pytest.fixture(scope="module")
async def replicated() -> AsyncIterator[Replicated]:
    async with primary_and_standbys(1) as nodes:
        servers: list[Server] = []
        try:
            settings = {"AGENTLOG_READ_DATABASE_URLS": nodes.read_urls(), "AGENTLOG_REPLICA_MAX_LAG_S": str(MAX_LAG_S)}
            with mock.patch.dict(os.environ, settings):
                servers = [start_server(nodes.url) for _ in range(2)]
            yield Replicated(nodes.primary, nodes.standbys[0], servers)
        finally:
            for server in servers:
                server.stop()


def replica_up(server: Server) -> float | None:
    text = httpx.get(server.url + "/metrics", timeout=10).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "agentlog_replica_up" and sample.labels.get("replica") == "replica0":
                return sample.value
    return None


async def answered_by(server: Server, read: Callable[[], Awaitable[object]]) -> tuple[str, object]:
    """The node that answered `read` on `server` (its one read counted), and what it answered."""
    before = reads_by_node(server)
    found = await read()
    after = reads_by_node(server)
    moved = [node for node, count in after.items() if count != before.get(node, 0)]
    assert len(moved) == 1, (before, after)
    return moved[0], found


async def until(check: Callable[[], Awaitable[bool]], within_s: float = 30) -> None:
    deadline = time.monotonic() + within_s
    while not await check():
        assert time.monotonic() < deadline, "not within the time allowed"
        await asyncio.sleep(0.2)


@pytest.fixture
async def shops(replicated: Replicated) -> AsyncIterator[tuple[Shop, Shop]]:
    """The same tenant seen through each server."""
    async with httpx.AsyncClient(base_url=replicated.servers[0].url, timeout=30) as a, \
            httpx.AsyncClient(base_url=replicated.servers[1].url, timeout=30) as b:
        first = Shop(Client(a))
        await first.setup()
        yield first, Shop(Client(b), tenant=first.tenant)


async def read_task(server: Server, shop: Shop, task: str, token: str | None = None) -> dict:
    headers = {"Authorization": f"Bearer {shop.noor}", **({HEADER: token} if token else {})}
    query = f"query($id: ID!) {{ task(id: $id) {{ {CONTENT} }} }}"
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(server.url + "/graphql", json={"query": query, "variables": {"id": task}},
                                   headers=headers)
    body = response.json()
    assert response.status_code == 200 and not body.get("errors"), body
    return body["data"]["task"]


async def caught_up(replicated: Replicated, shop: Shop, task: str) -> None:
    """Until every server reads `task` from the replica without a token."""
    for server in replicated.servers:
        async def from_replica() -> bool:
            node, found = await answered_by(server, lambda: read_task(server, shop, task))
            return node == "replica0" and found is not None
        await until(from_replica)


async def test_a_write_answers_a_token_and_reads_go_to_the_replica(replicated, shops):
    shop, _ = shops
    query = "mutation($input: StartTaskInput!) { startTask(input: $input) { id } }"
    input = {"agent": "Estimator", "skill": "EstimateRepair", "about": "Ticket T-7", "given": "T-7",
             "trigger": "Mia asked.", "requester": {"id": "mia", "name": "Mia"},
             "actor": {"id": "estimator", "name": "Estimator"}}
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(replicated.first.url + "/graphql", json={"query": query, "variables": {"input": input}},
                                   headers={"Authorization": f"Bearer {shop.kit}"})
    body = response.json()
    assert not body.get("errors"), body
    token = response.headers[HEADER]
    assert body["extensions"]["consistency"] == token
    task = body["data"]["startTask"]["id"]

    await caught_up(replicated, shop, task)
    node, found = await answered_by(replicated.first, lambda: read_task(replicated.first, shop, task, token))
    assert (node, found["given"]) == ("replica0", "T-7")


async def test_a_malformed_token_is_refused(replicated, shops):
    shop, _ = shops
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(replicated.first.url + "/graphql", json={"query": "{ tasks { totalCount } }"},
                                   headers={"Authorization": f"Bearer {shop.noor}", HEADER: "yesterday"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_INPUT"


async def test_while_replay_is_paused_a_token_reads_from_the_primary_and_so_does_no_token_past_the_lag(
    replicated, shops
):
    shop, _ = shops
    async with AsyncKit(replicated.first.url, shop.kit) as kit:
        await kit.register_agent("Estimator", roles=["Helper"], logging="FULL")
        warm = await kit.start_task("Estimator", "EstimateRepair", given="T-6")
        await warm.end()
        await caught_up(replicated, shop, warm.id)
        await replicated.standby.pause()
        try:
            task = await kit.start_task("Estimator", "EstimateRepair", given="T-8")
            token = kit.consistency
            assert token is not None

            read = "query($id: ID!) { task(id: $id) { id status } }"
            node, found = await answered_by(replicated.first, lambda: kit.query(read, {"id": task.id}))
            assert (node, found["task"]) == ("primary", {"id": task.id, "status": "RUNNING"})
            for server in replicated.servers:
                node, found = await answered_by(server, lambda: read_task(server, shop, task.id, token))
                assert (node, found["given"]) == ("primary", "T-8")

            await asyncio.sleep(MAX_LAG_S + 0.5)
            for server in replicated.servers:
                node, found = await answered_by(server, lambda: read_task(server, shop, warm.id))
                assert (node, found["given"]) == ("primary", "T-6")
            await task.end()
        finally:
            await replicated.standby.resume()


async def test_an_erasure_while_replay_is_paused_is_gone_from_every_server(replicated, shops):
    shop, _ = shops
    task = await shop.estimate()
    await caught_up(replicated, shop, task)
    await replicated.standby.pause()
    try:
        erase = "mutation($task: ID!) { eraseAgentWorkContent(task: $task, why: \"Mia asked.\") }"
        await shop.client.ok(erase, {"task": task}, shop.person("priya", "Privacy"))

        for server in replicated.servers:
            node, found = await answered_by(server, lambda: read_task(server, shop, task))
            assert found["given"] is None and all(line["payload"] is None for line in found["record"])
            assert node == "primary"
        kept = await replicated.standby.sql(f"SELECT count(*) FROM trace_event WHERE task_id = '{task}' "
                                            "AND payload IS NOT NULL", database="agentlog")
        assert kept, "the paused replica should still hold the content, or this test proves nothing"
    finally:
        await replicated.standby.resume()
    await caught_up(replicated, shop, task)
    found = await read_task(replicated.first, shop, task)
    assert found["given"] is None


async def audited(server: Server, auditor: str, task: str) -> list[dict]:
    query = "query($id: ID!) { task(id: $id) { record { payload } } }"
    async with httpx.AsyncClient(timeout=30) as http:
        body = (await http.post(server.url + "/graphql", json={"query": query, "variables": {"id": task}},
                                headers={"Authorization": f"Bearer {auditor}"})).json()
    assert not body.get("errors"), body
    return (body["data"]["task"] or {"record": []})["record"]


async def test_a_narrowed_policy_holds_on_every_server_while_replay_is_paused(replicated, shops):
    shop, _ = shops
    task = await shop.estimate()
    auditor = shop.person("ada", "Auditor")
    await caught_up(replicated, shop, task)
    for server in replicated.servers:
        assert any(line["payload"] for line in await audited(server, auditor, task))
    await replicated.standby.pause()
    try:
        await shop.write("definePolicies", {"auditsAgents": []})
        for server in replicated.servers:
            node, lines = await answered_by(server, lambda: audited(server, auditor, task))
            assert all(line["payload"] is None for line in lines)
            assert node == "primary"
    finally:
        await replicated.standby.resume()


async def test_a_subscriber_on_another_server_sees_each_event_as_it_happened_while_replay_is_paused(
    replicated, shops
):
    shop, _ = shops
    await replicated.standby.pause()
    try:
        async with subscribed(replicated.servers[1], shop.noor) as subscriber:
            task = (await shop.start())["id"]
            seen = [await subscriber.event_of(task)]
            await shop.end(task)
            seen.append(await subscriber.event_of(task))
    finally:
        await replicated.standby.resume()
    assert [(event["event"], event["task"]["status"]) for event in seen] == [
        ("AgentTaskStarted", "RUNNING"), ("AgentTaskFinished", "DONE")]


async def test_a_stopped_replica_is_left_out_without_an_error_and_taken_back(replicated, shops):
    shop, _ = shops
    task = await shop.estimate()
    await caught_up(replicated, shop, task)
    replicated.standby.stop("immediate")
    try:
        for _ in range(5):
            for server in replicated.servers:
                assert (await read_task(server, shop, task))["given"] is not None
        for server in replicated.servers:
            async def left_out() -> bool:
                return replica_up(server) == 0
            await until(left_out, within_s=5)
            node, _ = await answered_by(server, lambda: read_task(server, shop, task))
            assert node == "primary"
    finally:
        replicated.standby.start()
    await caught_up(replicated, shop, task)
