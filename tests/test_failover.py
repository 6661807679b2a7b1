"""The primary dies and its standby is promoted while kits and an OTLP exporter write, checked as Jepsen checks:
what was acknowledged against what the new primary holds. A primary of the test's own with one standby streaming
from it (tests/pg_replicas.py), a real `agentlog serve` on the two-host URL with `target_session_attrs=read-write`;
the link to the standby stalls for a second (tests/wal_link.py), the primary is SIGKILLed with every process it
started and the WAL in flight is gone, the standby is promoted with `pg_ctl promote`, and the server finds it by
itself. With the standby synchronous, nothing acknowledged is lost; with it asynchronous, what is lost is measured
and printed (docs/scale.md, "Failover")."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import asyncpg
import httpx
import pytest

from agentlog_kit import AsyncKit, Retry
from agentlog_kit.errors import AgentlogError
from permissions.tokens import issue_token
from tests.otlp_spans import agent, chat, export, new_trace_id, tool
from tests.pg_cluster import Cluster
from tests.pg_replicas import DATABASE, Nodes, Standby, with_database
from tests.servers import Server, start_server, subscribed
from tests.wal_link import WalLink, wal_link

pytestmark = pytest.mark.postgres_only

TENANT = "shop"
KIT = issue_token("agent-kit", TENANT, kit=True)
NOOR = issue_token("noor", TENANT, roles=["Auditor"], name="Noor")
KITS = 4
LINES_PER_BATCH = 4
BATCHES_PER_TASK = 3
EXPORTERS = 1
PATIENT = Retry(attempts=60, first_delay=0.05, max_delay=0.5)
WITHIN_S = 60
SETTLE_S = 30
STALLED_S = 1


@dataclass
class Tally:
    """What one writer was told was recorded, and what it was refused."""

    lines: list[str] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def acknowledged(self) -> int:
        return len(self.lines) + len(self.traces)


def two_host_url(nodes: Nodes) -> str:
    primary, standby = nodes.primary, nodes.standbys[0]
    return (f"postgres://postgres@127.0.0.1:{primary.port},127.0.0.1:{standby.port}/{DATABASE}"
            "?target_session_attrs=read-write")


async def on(port: int, statement: str, *arguments: object) -> object:
    conn = await asyncpg.connect(f"postgres://postgres@127.0.0.1:{port}/{DATABASE}")
    try:
        return await conn.fetch(statement, *arguments)
    finally:
        await conn.close()


async def make_synchronous(nodes: Nodes) -> None:
    """The standby becomes the primary's synchronous one: every commit waits until the standby has flushed it. Set
    after the base backup, so the promoted standby does not wait for a standby of its own."""
    port = nodes.primary.port
    await on(port, "ALTER SYSTEM SET synchronous_standby_names = '*'")
    await on(port, "ALTER SYSTEM SET synchronous_commit = 'on'")
    await on(port, "SELECT pg_reload_conf()")
    async with asyncio.timeout(WITHIN_S):
        while [row["sync_state"] for row in await on(port, "SELECT sync_state FROM pg_stat_replication")] != ["sync"]:
            await asyncio.sleep(0.1)


async def kit_writes(server: Server, number: int, tally: Tally, stop: asyncio.Event) -> None:
    """Tasks of three batches of tool calls each, every line named by a key of its own, until told to stop."""
    async with AsyncKit(server.url, KIT, batch_lines=LINES_PER_BATCH, retry=PATIENT, timeout=10) as kit:
        task_number = 0
        while not stop.is_set():
            task_number += 1
            try:
                task = await kit.start_task(agent="Estimator", skill="EstimateRepair", requester="mia",
                                            given=f"Bike {number}-{task_number} brakes badly.")
                for batch in range(BATCHES_PER_TASK):
                    keys = [f"k{number}-{task_number}-{batch}-{n}" for n in range(LINES_PER_BATCH)]
                    for key in keys:
                        await task.tool_call("PartsFor", tool_call_id=key, input={"line": key})
                    await task.flush()
                    tally.lines.extend(keys)
                await task.end("DONE")
                tally.ended.append(task.id)
            except AgentlogError as exc:
                tally.refused.append(f"{exc.code}: {exc}")
                kit.open.clear()


async def exports(server: Server, tally: Tally, stop: asyncio.Event) -> None:
    """A trace of an agent, a model call and a tool a time, each export sent again, as an OTLP exporter does, on a
    503 or a dropped connection until it is answered."""
    headers = {"Authorization": f"Bearer {KIT}", "Content-Type": "application/x-protobuf"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=10) as http:
        while not stop.is_set():
            tag = os.urandom(4).hex()
            trace = new_trace_id()
            root = agent(trace, f"A{tag}")
            body = export(root, chat(trace, root.span_id, f"m{tag}"), tool(trace, root.span_id, f"t{tag}"))
            async with asyncio.timeout(WITHIN_S):
                while True:
                    try:
                        response = await http.post("/v1/traces", content=body.SerializeToString())
                    except httpx.TransportError:
                        await asyncio.sleep(0.1)
                        continue
                    if response.status_code != 503:
                        break
                    assert response.headers["retry-after"]
                    await asyncio.sleep(0.1)
            if response.status_code == 200:
                tally.traces.append(tag)
            else:
                tally.refused.append(f"HTTP {response.status_code}: {response.text}")


async def each_acknowledges_more(tallies: list[Tally], more: int) -> None:
    goals = [tally.acknowledged() + more for tally in tallies]
    async with asyncio.timeout(WITHIN_S):
        while any(tally.acknowledged() < goal for tally, goal in zip(tallies, goals)):
            await asyncio.sleep(0.05)


async def graphql(http: httpx.AsyncClient, query: str, variables: dict | None = None, token: str = KIT) -> dict:
    response = await http.post("/graphql", json={"query": query, "variables": variables or {}},
                               headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert not body.get("errors"), body
    return body["data"]


async def settled(port: int) -> None:
    """Until no span waits for its parent and no task of the exporter runs, or SETTLE_S."""
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        waiting = await on(port, "SELECT count(*) AS n FROM otlp_span WHERE tenant = $1", TENANT)
        running = await on(port, "SELECT count(*) AS n FROM agent_task WHERE tenant = $1 AND status = 'RUNNING' "
                                 "AND agent LIKE 'A%'", TENANT)
        if waiting[0]["n"] == 0 and running[0]["n"] == 0:
            return
        await asyncio.sleep(0.2)


async def an_event_is_heard(server: Server, http: httpx.AsyncClient) -> bool:
    """A subscriber hears of a task started after the failover: the server's listening connection found the new
    primary too. Tasks are started until one is heard of, as the listener may still be reconnecting."""
    async with subscribed(server, NOOR) as subscriber, asyncio.timeout(WITHIN_S):
        while True:
            started = await graphql(http, 'mutation { startTask(input: {agent: "Estimator", skill: "EstimateRepair", '
                                          'actor: {id: "estimator"}, requester: {id: "mia"}}) { id } }')
            try:
                await subscriber.event_of(started["startTask"]["id"], timeout=1)
                return True
            except TimeoutError:
                continue


@dataclass
class Outcome:
    acknowledged_lines: int
    acknowledged_spans: int
    lost_lines: int
    lost_spans: int
    twice: int
    ended_but_running: int
    broken_chains: list[dict]
    refused: list[str]
    promoted_s: float
    unavailable_s: float
    unavailable_answers: int
    heard_after_failover: bool


@asynccontextmanager
async def primary_and_linked_standby() -> AsyncIterator[tuple[Nodes, WalLink]]:
    """A primary holding an empty database and one standby streaming from it through a link the test holds."""
    nodes = Nodes(Cluster(), [])
    try:
        await with_database(nodes.primary)
        async with wal_link(nodes.primary.port) as link:
            nodes.standbys.append(await asyncio.to_thread(Standby, nodes.primary, link.port))
            await asyncio.to_thread(nodes.standbys[0].start)
            yield nodes, link
    finally:
        for standby in nodes.standbys:
            standby.remove()
        nodes.primary.remove()


async def fail_over_while_writing(synchronous: bool, stalled_s: float) -> Outcome:
    """Writers write; the link to the standby stalls for `stalled_s`; the primary dies with the WAL in flight; the
    standby is promoted; writers write on. What the new primary holds, against what was acknowledged."""
    async with primary_and_linked_standby() as (nodes, link):
        if synchronous:
            await make_synchronous(nodes)
        server = await asyncio.to_thread(start_server, two_host_url(nodes))
        try:
            return await write_kill_promote(nodes, link, stalled_s, server)
        finally:
            server.stop()


async def write_kill_promote(nodes: Nodes, link: WalLink, stalled_s: float, server: Server) -> Outcome:
    new_primary = nodes.standbys[0].port
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        await graphql(http, 'mutation { registerAgent(input: {name: "Estimator"}) { name } }')
        await graphql(http, 'mutation { definePolicies(input: {auditsAgents: ["Auditor"]}) { auditsAgents } }')
        tallies = [Tally() for _ in range(KITS + EXPORTERS)]
        stop = asyncio.Event()
        writing = [asyncio.create_task(kit_writes(server, n, tallies[n], stop)) for n in range(KITS)]
        writing += [asyncio.create_task(exports(server, tally, stop)) for tally in tallies[KITS:]]
        try:
            await each_acknowledges_more(tallies, 8)
            if stalled_s:
                link.stall()
                await asyncio.sleep(stalled_s)
            await asyncio.to_thread(nodes.primary.kill)
            killed_at = time.monotonic()
            await link.cut()
            await asyncio.to_thread(nodes.standbys[0].promote)
            promoted_s = time.monotonic() - killed_at
            written = sum(tally.acknowledged() for tally in tallies)
            async with asyncio.timeout(WITHIN_S):
                while sum(tally.acknowledged() for tally in tallies) == written:
                    await asyncio.sleep(0.01)
            unavailable_s = time.monotonic() - killed_at
            await each_acknowledges_more(tallies, 8)
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*writing), WITHIN_S)

        heard = await an_event_is_heard(server, http)
        await settled(new_primary)
        roots = await on(new_primary, "SELECT id::text AS id FROM agent_task WHERE tenant = $1 AND depth = 0", TENANT)
        broken = []
        for root in roots:
            check = await graphql(http, "query($id: ID!) { verifyTrace(task: $id) { intact lines problem } }",
                                  {"id": root["id"]}, NOOR)
            if not check["verifyTrace"]["intact"]:
                broken.append(check["verifyTrace"])

    lines = [key for tally in tallies for key in tally.lines]
    found = {row["tool_call_id"]: row["n"] for row in await on(
        new_primary, "SELECT tool_call_id, count(*) AS n FROM trace_event WHERE tenant = $1 AND kind = 'TOOL_CALL' "
                     "AND tool = 'PartsFor' GROUP BY tool_call_id", TENANT)}
    traces = [tag for tally in tallies for tag in tally.traces]
    spans = {row["what"]: row["n"] for row in await on(
        new_primary,
        "SELECT agent AS what, count(*) AS n FROM agent_task WHERE tenant = $1 AND agent LIKE 'A%' GROUP BY agent "
        "UNION ALL SELECT model, count(*) FROM llm_call WHERE tenant = $1 GROUP BY model "
        "UNION ALL SELECT tool, count(*) FROM trace_event WHERE tenant = $1 AND kind = 'TOOL_CALL' "
        "AND tool <> 'PartsFor' GROUP BY tool", TENANT)}
    span_names = [f"{kind}{tag}" for tag in traces for kind in "Amt"]
    ended = [task for tally in tallies for task in tally.ended]
    running = await on(new_primary, "SELECT count(*) AS n FROM agent_task WHERE id = ANY($1::uuid[]) "
                                    "AND status = 'RUNNING'", ended)
    return Outcome(
        acknowledged_lines=len(lines),
        acknowledged_spans=len(span_names),
        lost_lines=sum(1 for key in lines if key not in found),
        lost_spans=sum(1 for name in span_names if name not in spans),
        twice=sum(1 for n in [*found.values(), *spans.values()] if n > 1),
        ended_but_running=running[0]["n"],
        broken_chains=broken,
        refused=[refusal for tally in tallies for refusal in tally.refused],
        promoted_s=promoted_s,
        unavailable_s=unavailable_s,
        heard_after_failover=heard,
        unavailable_answers=sum("the database cannot be reached" in line for line in server.log),
    )


async def test_with_a_synchronous_standby_nothing_acknowledged_is_lost():
    outcome = await fail_over_while_writing(synchronous=True, stalled_s=STALLED_S)
    print(f"\nsynchronous standby, stalled {STALLED_S} s: {outcome}")

    assert outcome.acknowledged_lines > 0 and outcome.acknowledged_spans > 0
    assert outcome.unavailable_answers > 0, "no request met the primary's death"
    assert outcome.refused == []
    assert (outcome.lost_lines, outcome.lost_spans) == (0, 0)
    assert outcome.twice == 0, "a retried write was recorded twice"
    assert outcome.ended_but_running == 0
    assert outcome.broken_chains == []
    assert outcome.heard_after_failover


async def test_with_an_asynchronous_standby_what_is_lost_is_measured():
    outcome = await fail_over_while_writing(synchronous=False, stalled_s=STALLED_S)
    print(f"\nasynchronous standby, stalled {STALLED_S} s: lost {outcome.lost_lines} of {outcome.acknowledged_lines} "
          f"acknowledged lines and {outcome.lost_spans} of {outcome.acknowledged_spans} spans: {outcome}")

    assert outcome.acknowledged_lines > 0 and outcome.acknowledged_spans > 0
    assert outcome.twice == 0, "a retried write was recorded twice"
    assert outcome.broken_chains == []
