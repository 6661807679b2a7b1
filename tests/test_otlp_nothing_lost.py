"""Nothing acknowledged is lost (SPEC 7.2), tried as exporters would: traces of agents, model calls and tools,
some spans' parents never coming, cut into exports sent in any order and replayed, to a running `agentlog serve`
and to a second server on the same database that is killed with SIGKILL right after it answers, both placing
a trace of more than three spans in passes (the rest of them after the answer). Some spans are announced by a start
marker (SPEC 9.1), sent in any order with the spans, and some root agents' spans never come after their marker.
Once the wait is over, every span acknowledged is recorded exactly once, every chain verifies, and every task,
stand-ins, the late work of ended agents and the tasks whose end was never reported included, has ended with its
own ENDED line its last."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, note, settings, strategies as st

from models import AgentTask, LlmCall, OtlpOpenTask, OtlpSpan, TraceEvent
from models.record.vocabulary import LineKind, TaskStatus
from permissions.tokens import issue_token
from resolvers.read.verify import verify_tree
from tests.shop import work
from tests.otlp_spans import agent, chat, export, marker, new_span_id, new_trace_id, tool
from tests.servers import Server, start_server
from tests.test_otlp_ingest import post

WAIT_S = "0.5"
PASS_SPANS = "3"
SETTLE_S = 30
KINDS = ("agent", "llm", "tool")
LATE = "late work"
NEVER_REPORTED = "Its end was never reported."


@dataclass(frozen=True)
class Drawn:
    """A span as drawn: its kind, and its parent: an earlier span of the trace, one that never comes, or none."""

    kind: str
    parent: int | None
    orphan: bool


@dataclass(frozen=True)
class Scenario:
    """The traces; what is sent, as (trace, span, whether its marker); the exports, as indexes into `sent`; which
    exports go to the second server; and the traces whose root agent's span never comes after its marker."""

    traces: list[list[Drawn]]
    sent: list[tuple[int, int, bool]]
    exports: list[tuple[int, ...]]
    second: list[bool]
    unreported: list[bool]


@st.composite
def scenarios(draw) -> Scenario:
    traces = []
    for _ in range(draw(st.integers(1, 2))):
        size = draw(st.integers(1, 9))
        spans = [Drawn("agent", None, draw(st.booleans()) and draw(st.booleans()))]
        for n in range(1, size):
            spans.append(Drawn(draw(st.sampled_from(KINDS)), draw(st.integers(0, n - 1)),
                               draw(st.integers(0, 5)) == 0))
        traces.append(spans)
    marked = [[draw(st.booleans()) for _ in spans] for spans in traces]
    unreported = [marks[0] and not spans[0].orphan and draw(st.booleans()) for spans, marks in zip(traces, marked)]
    ids = [(t, n, True) for t, marks in enumerate(marked) for n, mark in enumerate(marks) if mark]
    ids += [(t, n, False) for t, spans in enumerate(traces) for n in range(len(spans)) if n or not unreported[t]]
    order = draw(st.permutations(range(len(ids))))
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(ids) - 1)), max_size=3)))
    exports = [tuple(order[a:b]) for a, b in zip([0, *cuts], [*cuts, len(ids)]) if a < b]
    for _ in range(draw(st.integers(0, 2))):
        exports.insert(draw(st.integers(0, len(exports))), draw(st.sampled_from(exports)))
    second = [draw(st.booleans()) and draw(st.booleans()) for _ in exports]
    return Scenario(traces, ids, exports, second, unreported)


def serve(database: str) -> Server:
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv("AGENTLOG_OTLP_WAIT_S", WAIT_S)
        patched.setenv("AGENTLOG_OTLP_PASS_SPANS", PASS_SPANS)
        return start_server(database)


@pytest.fixture(scope="module")
def first(database) -> Iterator[Server]:
    server = serve(database)
    try:
        yield server
    finally:
        server.stop()


def built(scenario: Scenario, tag: str) -> list:
    """The protobuf spans and markers, as `scenario.sent` lists them, each named so its record can be counted:
    agent A{t}.{n}, model m{t}.{n}, tool t{t}.{n}."""
    made, spans_of = [], {}
    for t, spans in enumerate(scenario.traces):
        trace_id, span_ids = new_trace_id(), [new_span_id() for _ in spans]
        for n, drawn in enumerate(spans):
            parent = new_span_id() if drawn.orphan else b"" if drawn.parent is None else span_ids[drawn.parent]
            name = f"{tag}{t}.{n}"
            if drawn.kind == "agent":
                made.append(agent(trace_id, f"A{name}", parent=parent))
            elif drawn.kind == "llm":
                made.append(chat(trace_id, parent, f"m{name}"))
            else:
                made.append(tool(trace_id, parent, f"t{name}"))
            made[-1].span_id = span_ids[n]
            spans_of[t, n] = made[-1]
    return [marker(spans_of[t, n]) if is_marker else spans_of[t, n] for t, n, is_marker in scenario.sent]


IN_PROCESS = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                      phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))


async def posted(shop, scenario: Scenario, tag: str) -> None:
    """The scenario's exports, in its order, to the shop's server in this process: for the tests that set two ways
    of placing side by side over these scenarios (IN_PROCESS)."""
    spans = built(scenario, tag)
    for members in scenario.exports:
        assert (await post(shop, export(*(spans[i] for i in members)))).status_code == 200


async def send(server: Server, kit: str, body: bytes) -> None:
    """One export, retried as an exporter retries until it is acknowledged."""
    headers = {"Authorization": f"Bearer {kit}", "Content-Type": "application/x-protobuf"}
    async with httpx.AsyncClient(timeout=60) as http:
        for _ in range(20):
            response = await http.post(f"{server.url}/v1/traces", content=body, headers=headers)
            if response.status_code == 200:
                return
            assert response.status_code == 503, response.text
            await asyncio.sleep(0.2)
    raise AssertionError("the export was never acknowledged")


async def recorded(tenant: str, scenario: Scenario, tag: str) -> list[int]:
    counts = []
    for t, spans in enumerate(scenario.traces):
        for n, drawn in enumerate(spans):
            name = f"{tag}{t}.{n}"
            if drawn.kind == "agent":
                counts.append(await work(tenant).filter(agent=f"A{name}").exclude(skill=LATE).count())
            elif drawn.kind == "llm":
                counts.append(await LlmCall.filter(tenant=tenant, model=f"m{name}").count())
            else:
                calls = await TraceEvent.filter(tenant=tenant, tool=f"t{name}", kind="TOOL_CALL").count()
                results = await TraceEvent.filter(tenant=tenant, tool=f"t{name}", kind="TOOL_RESULT").count()
                counts.append(calls if calls == results else -1)
    return counts


async def settled(tenant: str, scenario: Scenario, tag: str) -> list[int]:
    """What is recorded once nothing of the tenant waits and every task has ended, or after SETTLE_S."""
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        waiting = await OtlpSpan.filter(tenant=tenant).count()
        running = await work(tenant).filter(status=TaskStatus.RUNNING).count()
        if not waiting and not running:
            break
        await asyncio.sleep(0.1)
    return await recorded(tenant, scenario, tag)


@given(scenario=scenarios())
@settings(max_examples=int(os.environ.get("AGENTLOG_NOTHING_LOST_EXAMPLES", "16")), deadline=None,
          derandomize=True, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))
async def test_every_acknowledged_span_is_recorded_exactly_once_and_every_chain_verifies(database, first, scenario):
    tag = os.urandom(3).hex()
    tenant = f"lost-{tag}"
    kit = issue_token("agent-kit", tenant, kit=True)
    spans = built(scenario, tag)
    note(f"tenant {tenant}: {scenario}")
    second = None
    try:
        for n, (members, to_second) in enumerate(zip(scenario.exports, scenario.second)):
            if to_second and second is None:
                second = await asyncio.to_thread(serve, database)
            await send(second if to_second else first, kit, export(*(spans[i] for i in members)).SerializeToString())
            if to_second and not any(scenario.second[n + 1:]):
                os.killpg(second.process.pid, signal.SIGKILL)
                second.process.wait(timeout=15)
    finally:
        if second is not None:
            second.stop()

    counts = await settled(tenant, scenario, tag)

    assert counts == [1] * sum(len(trace) for trace in scenario.traces)
    assert await OtlpSpan.filter(tenant=tenant).count() == 0
    assert await OtlpOpenTask.filter(tenant=tenant).count() == 0
    for t, unreported in enumerate(scenario.unreported):
        if unreported:
            root = await AgentTask.get(tenant=tenant, agent=f"A{tag}{t}.0", depth=0)
            assert (root.status, root.outcome) == (TaskStatus.FAILED, NEVER_REPORTED)
    for root in await work(tenant).filter(depth=0):
        assert (await verify_tree(root)).intact, root.agent
    for task in await work(tenant):
        last = await TraceEvent.filter(task_id=task.id).order_by("-seq").first()
        assert (task.status != TaskStatus.RUNNING, last.kind) == (True, LineKind.ENDED), (task.agent, task.skill)
