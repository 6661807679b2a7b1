"""Tenants cannot see each other: another tenant's id is answered exactly as an id that never existed."""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from models import AgentHelp, AgentTask, LlmCall, TraceEvent
from permissions.table import Group
from tests.shop import ROLES, Client, Shop, work
from tests.test_access_matrix import selection

EVERY_ROLE = (*ROLES.values(), "Finance", "Mechanic")


def everything_of(type_name: str) -> str:
    return " ".join(part for group in Group for part in selection(type_name, group))


TASK = f"query($id: ID!) {{ task(id: $id) {{ {everything_of('AgentTask')} transcript {{ turn }} }} }}"
VERIFY = "query($id: ID!) { verifyTrace(task: $id) { intact lines brokenAt problem erased } }"
HELP = f"query($id: ID!) {{ agentHelp(id: $id) {{ {everything_of('AgentHelp')} task {{ id }} }} }}"
TASKS = "query($filter: TaskFilter, $after: String) { tasks(filter: $filter, after: $after) { " \
        "edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }"


@dataclass
class TenantA:
    shop: Shop
    running: str
    ended: str
    help: str
    answered: str
    outside: str
    cursor: str
    started_at: str


async def tenant_a(client: Client) -> TenantA:
    """Tenant A: an ended piece of work, a running one with a question waiting, and a question outside any work."""
    shop = Shop(client)
    await shop.setup(transcript_readers=["Finance"])
    await shop.write("registerAgent", {"name": "Auditor", "transcriptReaders": ["Finance"]})
    ended = await shop.estimate(agent="Auditor", skill="ReviewReport", session="a-session",
                                requester={"id": "alice"}, idempotencyKey="a-start")
    answered = (await shop.write("askForHelp", {"question": "Open on Sunday?", "askedOf": {"id": "olga"}}))["id"]
    await shop.write("sendBack", {"help": answered, "answer": "No.", "by": {"id": "olga"}})
    running = (await shop.start(agent="Auditor", skill="ReviewReport", session="a-session"))["id"]
    help = (await shop.write("askForHelp", {"task": running, "question": "Which report?", "askedOf": {"id": "olga"}}))["id"]
    outside = (await shop.write("askForHelp", {"question": "Who signs?", "askedOf": {"id": "olga"}}))["id"]
    data = await client.ok(TASKS, {}, shop.noor)
    edge = next(e for e in data["tasks"]["edges"] if e["node"]["id"] == ended)
    started_at = (await shop.read(ended, shop.noor, "startedAt"))["startedAt"]
    return TenantA(shop, running, ended, help, answered, outside, edge["cursor"], started_at)


@pytest.fixture(scope="module")
async def world(app):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agentlog.test") as http:
        client = Client(http)
        a = await tenant_a(client)
        probe = Shop(client)
        await probe.setup(transcript_readers=["Finance"])
        yield a, probe


def probers(probe: Shop) -> dict[str, str]:
    """Tenant P's callers: one holding every role, the kit, and the same subs tenant A's people have."""
    return {
        "every role": probe.person("eve", *EVERY_ROLE),
        "kit": probe.kit,
        "noor": probe.noor,
        "olga": probe.person("olga", *EVERY_ROLE),
        "alice": probe.person("alice", *EVERY_ROLE),
    }


async def raw(client: Client, query: str, variables: dict, token: str) -> str:
    response = await client.http.post("/graphql", json={"query": query, "variables": variables},
                                      headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    return response.text


async def same_as_unknown(client: Client, query: str, variables: dict, theirs: str, token: str) -> None:
    """The answer for `theirs` is the answer for an id that never existed, byte for byte but for the id itself."""
    unknown = str(uuid.uuid4())
    answer = await raw(client, query, {k: (theirs if v == theirs else v) for k, v in variables.items()}, token)
    control = await raw(client, query, {k: (unknown if v == theirs else v) for k, v in variables.items()}, token)
    assert answer.replace(theirs, "<id>") == control.replace(unknown, "<id>")


READS = [
    ("task", TASK, "running"), ("task", TASK, "ended"),
    ("verifyTrace", VERIFY, "running"), ("verifyTrace", VERIFY, "ended"),
    ("agentHelp", HELP, "help"), ("agentHelp", HELP, "answered"), ("agentHelp", HELP, "outside"),
]


@pytest.mark.parametrize("who", ["every role", "kit", "noor", "olga", "alice"])
@pytest.mark.parametrize("field,query,target", READS, ids=[f"{f}-{t}" for f, _, t in READS])
async def test_every_query_answers_another_tenants_id_as_an_unknown_one(world, who, field, query, target):
    a, probe = world
    theirs = getattr(a, target)

    await same_as_unknown(probe.client, query, {"id": theirs}, theirs, probers(probe)[who])
    assert json.loads(await raw(probe.client, query, {"id": theirs}, probers(probe)[who])) == {"data": {field: None}}


def filters(a: TenantA) -> list[dict]:
    before = (datetime.fromisoformat(a.started_at) - timedelta(hours=1)).isoformat()
    after = (datetime.fromisoformat(a.started_at) + timedelta(hours=1)).isoformat()
    return [
        {"agent": "Auditor"}, {"skill": "ReviewReport"}, {"status": "RUNNING"}, {"status": "DONE"},
        {"requester": "alice"}, {"requester": "mia"}, {"session": "a-session"}, {"rootsOnly": True},
        {"startedAfter": before}, {"startedBefore": after},
        {"agent": "Auditor", "skill": "ReviewReport", "session": "a-session", "startedAfter": before},
    ]


@pytest.mark.parametrize("who", ["every role", "kit", "noor", "alice"])
async def test_no_filter_of_tasks_finds_another_tenants_work(world, who):
    a, probe = world
    token = probers(probe)[who]
    unknown = await raw(probe.client, TASKS, {"filter": {"agent": "Nobody"}}, token)
    forbidden = await raw(probe.client, TASKS, {"filter": {"requester": "nobody"}}, token)

    for flt in filters(a):
        control = forbidden if "requester" in flt else unknown
        assert await raw(probe.client, TASKS, {"filter": flt}, token) == control, flt
    assert json.loads(unknown)["data"]["tasks"]["edges"] == []


@pytest.mark.parametrize("who", ["every role", "kit"])
async def test_another_tenants_cursor_pages_like_an_unknown_one(world, who):
    a, probe = world
    bound, at, _ = json.loads(base64.urlsafe_b64decode(a.cursor))
    unknown = base64.urlsafe_b64encode(json.dumps([bound, at, str(uuid.uuid4())]).encode()).decode()
    token = probers(probe)[who]

    assert await raw(probe.client, TASKS, {"after": a.cursor}, token) == \
           await raw(probe.client, TASKS, {"after": unknown}, token)


def writes(a: TenantA) -> list[tuple[str, str, dict, str]]:
    """Each kit mutation, aimed at one of tenant A's rows: (mutation, input type, input, the id aimed at)."""
    out = []
    for task in (a.running, a.ended):
        out += [
            ("startTask", "StartTaskInput", {"agent": "Estimator", "skill": "S", "actor": {"id": "x"}, "parent": task}, task),
            ("recordModelCall", "ModelCallInput", {"task": task, "model": "m", "inputTokens": 1, "outputTokens": 1,
                                                   "costMicros": 1}, task),
            ("recordToolCall", "ToolCallInput", {"task": task, "tool": "t", "input": 1}, task),
            ("recordToolResult", "ToolResultInput", {"task": task, "tool": "t", "output": 1}, task),
            ("askForHelp", "AskForHelpInput", {"task": task, "question": "q", "askedOf": {"id": "olga"}}, task),
            ("endTask", "EndTaskInput", {"task": task, "status": "DONE"}, task),
        ]
    for help in (a.help, a.answered, a.outside):
        out.append(("sendBack", "SendBackInput", {"help": help, "answer": "a", "by": {"id": "olga"}}, help))
    return out


async def test_no_kit_mutation_reaches_another_tenants_work_or_says_it_is_there(world):
    a, probe = world
    before = await a.shop.read(a.running, a.shop.noor, "chainLength chainHead")
    probes_tasks = await work(probe.tenant).count()

    for mutation, input_type, input, theirs in writes(a):
        query = f"mutation($input: {input_type}!) {{ {mutation}(input: $input) {{ __typename }} }}"
        unknown = str(uuid.uuid4())
        answer = await raw(probe.client, query, {"input": input}, probe.kit)
        control = await raw(probe.client, query, {"input": _swap(input, theirs, unknown)}, probe.kit)
        assert answer.replace(theirs, "<id>") == control.replace(unknown, "<id>"), mutation
        assert json.loads(answer)["errors"][0]["extensions"]["code"] == "NOT_FOUND", mutation

    assert await a.shop.read(a.running, a.shop.noor, "chainLength chainHead") == before
    assert (await a.shop.verify(a.ended))["intact"] and (await a.shop.verify(a.running))["intact"]
    for help in (a.help, a.outside):
        assert (await AgentHelp.get(id=help)).answered_at is None
    assert await work(probe.tenant).count() == probes_tasks


def _swap(input: dict, theirs: str, unknown: str) -> dict:
    return {k: (unknown if v == theirs else v) for k, v in input.items()}


async def test_an_idempotency_key_another_tenant_used_starts_fresh_work(world):
    a, _ = world
    b = Shop(a.shop.client)
    await b.setup()
    task = await b.start(idempotencyKey="a-start")

    assert task["id"] != a.ended
    assert (await b.read(task["id"], b.noor, "agent requester { id }")) == {
        "agent": "Estimator", "requester": {"id": "mia"}}


async def test_the_same_sub_in_two_tenants_is_two_people(client):
    a, b = Shop(client), Shop(client)
    for shop in (a, b):
        await shop.setup()
    await b.write("definePolicies", {"auditsAgents": ["Clerk"]})
    await b.write("registerAgent", {"name": "Estimator", "transcriptReaders": ["Finance"]})
    task = await a.estimate()
    outside = (await a.write("askForHelp", {"question": "Open on Sunday?", "askedOf": {"id": "mia"}}))["id"]
    mia_in_b = b.person("mia", "Mechanic", "Clerk", "Finance", *ROLES.values())
    mia_in_a_with_bs_roles = a.person("nadia", "Clerk", "Finance")

    assert await b.read(task, mia_in_b, "id") is None
    assert (await client.ok("{ tasks { edges { node { id } } } }", token=mia_in_b))["tasks"]["edges"] == []
    assert (await client.ok("query($id: ID!) { agentHelp(id: $id) { id } }", {"id": outside}, mia_in_b)) == {
        "agentHelp": None}
    assert (await client.ok("{ me { id tenant } }", token=mia_in_b))["me"] == {"id": "mia", "tenant": b.tenant}
    assert await a.read(task, mia_in_a_with_bs_roles, "id") is None
    assert (await a.read(task, a.mia, "transcript { turn }"))["transcript"] == []
    assert (await a.read(task, a.person("fin", "Finance", "Manager"), "transcript { turn }"))["transcript"] == []


async def test_rows_of_another_tenant_linked_into_a_tree_are_not_read_with_it(world):
    """However a row came to point into this tenant's tree, every read of the tree filters by tenant first."""
    a, _ = world
    probe = Shop(a.shop.client)
    await probe.setup(transcript_readers=["Finance"])
    root = await probe.estimate()
    reader = probers(probe)["every role"]
    query = f"query($id: ID!) {{ task(id: $id) {{ {everything_of('AgentTask')} transcript {{ turn tools {{ name }} }} " \
            f"record {{ seq summary }} trace {{ seq }} calls {{ id costMicros }} }} }}"
    before = await raw(probe.client, query, {"id": root}, reader)
    row = await AgentTask.get(id=root)
    await forge_rows_of(a.shop.tenant, row)

    assert await raw(probe.client, query, {"id": root}, reader) == before


async def forge_rows_of(tenant: str, row: AgentTask) -> None:
    now = datetime.now(timezone.utc)
    child = uuid.uuid4()
    await AgentTask.create(
        id=child, tenant=tenant, agent=row.agent, skill="Forged", cause="REQUEST", actor_id="x", status="DONE",
        started_at=now, parent_id=row.id, root_id=row.root_id, depth=1, sequence=1, path=f"{row.path}/{child}",
        requester_id="eve",
    )
    for task_id in (row.id, child):
        await TraceEvent.create(
            tenant=tenant, root_id=row.root_id, seq=10_000 + (task_id == child), kind="MODEL_CALL", task_id=task_id,
            at=now, summary="Forged.", payload="{}", model="m", cost_micros=1_000_000, summary_hash="0" * 64,
            payload_hash="0" * 64, prev_hash="0" * 64, hash="0" * 64,
        )
        await TraceEvent.create(
            tenant=tenant, root_id=row.root_id, seq=10_002 + (task_id == child), kind="TOOL_CALL", task_id=task_id,
            at=now, summary="Forged.", tool="Forged", summary_hash="0" * 64, payload_hash="0" * 64,
            prev_hash="0" * 64, hash="0" * 64,
        )
        await LlmCall.create(
            id=uuid.uuid4(), tenant=tenant, task_id=task_id, task_path=row.path if task_id == row.id else f"{row.path}/{child}",
            turn=9, agent=row.agent, model="m", attempts=1, input_tokens=5, output_tokens=5, cost_micros=1_000_000, at=now,
        )
