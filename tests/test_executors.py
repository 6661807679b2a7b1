"""The fast executor (graph/fast/execution.py) and graphql-core's own, run on one corpus of queries, answer byte for
byte the same: every field of every type, fragments, aliases, nulls, denied fields, errors, __typename, deep
nesting, as each kind of reader."""

from __future__ import annotations

import asyncio
import json
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timezone

import httpx
import pytest
import strawberry
from hypothesis import given, settings, strategies as st
from graphql import GraphQLObjectType, Undefined, get_named_type, is_leaf_type, is_non_null_type, is_object_type
from graph.app import create_app
from graph.fast.execution import TreeExecution, utc_iso
from graph.api.schema import build_schema
from models.settings import Settings, load, using
from permissions.tokens import issue_token
from tests.shop import Client, Shop

WHY = "Mia asked for her data to be erased."


@dataclass
class World:
    shop: Shop
    root: str
    child: str
    grandchild: str
    erased: str
    withheld: str
    help: str
    readers: dict[str, str | None]


async def build_world(client: Client) -> World:
    shop = Shop(client)
    await shop.setup(transcript_readers=["Manager", "Mechanic"])
    await shop.write("registerAgent", {"name": "Quiet", "logging": "METADATA_ONLY"})
    root = (await shop.start(session="chat-7", workflowRun="run-1", runStep="estimate", instructionSet=3,
                             instructionsSent="Estimate carefully."))["id"]
    await shop.model_call(root)
    await shop.tool(root, "PartsFor", {"fault": "rear brake"}, ["brake pads", "cable"], "c1")
    help = (await shop.write("askForHelp", {"task": root, "question": "Is it a rim brake?",
                                            "askedOf": {"id": "mia", "name": "Mia"}}))["id"]
    await shop.write("sendBack", {"help": help, "answer": "Yes.", "by": {"id": "mia", "name": "Mia"}})
    child = (await shop.start(parent=root, skill="OrderParts", about="Parts for T-7"))["id"]
    await shop.model_call(child, byTool="PartsFor")
    await shop.model_call(child, costMicros=0, inputTokens=0)
    grandchild = (await shop.start(parent=child, skill="CheckStock", requester={"id": "sam", "name": "Sam"}))["id"]
    await shop.tool(grandchild, "Stock", {"part": "cable"}, {"error": "timeout"}, None)
    await shop.end(grandchild, status="FAILED", outcome="The stock system timed out.")
    await shop.end(child, outcome="Ordered.", result=None)
    await shop.model_call(root, response={"text": "done"})
    await shop.end(root, outcome="Estimated one hour.", result={"hours": 1, "parts": ["pads", None]})
    erased = await shop.estimate(about="Ticket T-8")
    privacy = shop.person("priya", "Privacy", name="Priya")
    await client.ok("mutation($id: ID!, $why: String!) { anonymiseAgentWork(task: $id, why: $why) }",
                    {"id": erased, "why": WHY}, privacy)
    withheld = (await shop.start(agent="Quiet", skill="Listen"))["id"]
    await shop.model_call(withheld, classification="REDACTED")
    # a reader of each row of the access table, a requester of a sub-task only, and readers of nothing
    readers = {
        "mia": shop.mia, "noor": shop.noor, "manager": shop.person("max", "Manager"),
        "auditor": shop.person("aud", "Auditor"), "teacher": shop.person("tess", "Teacher"),
        "accountant": shop.person("ada", "Accountant"), "privacy": privacy, "kit": shop.kit,
        "sam, who asked for a sub-task": shop.person("sam"), "stranger": issue_token("mia", "another-shop", roles=["Auditor"]),
        "nobody": None,
    }
    return World(shop, root, child, grandchild, erased, withheld, help, readers)


def selection(object_type: GraphQLObjectType, depth: int) -> str:
    """Every field of the type that takes no required argument; object fields opened `depth` levels down."""
    parts = []
    for name, field in object_type.fields.items():
        if any(is_non_null_type(arg.type) and arg.default_value is Undefined for arg in field.args.values()):
            continue
        inner = get_named_type(field.type)
        if is_leaf_type(inner):
            parts.append(name)
        elif is_object_type(inner) and depth > 0:
            parts.append(f"{name} {{ __typename {selection(inner, depth - 1)} }}")
    return " ".join(parts)


def every_field_queries() -> list[tuple[str, str]]:
    """One query per field of AgentTask, each opening what the field holds; and one per other root field."""
    schema = build_schema()._schema
    task_type = schema.type_map["AgentTask"]
    queries = []
    for name, field in task_type.fields.items():
        inner = get_named_type(field.type)
        body = name if is_leaf_type(inner) else f"{name} {{ {selection(inner, 1)} }}"
        queries.append((f"task.{name}", f"query($id: ID!) {{ task(id: $id) {{ id {body} }} }}"))
    for list_field, type_name in (("record", "TraceEvent"), ("calls", "LlmCall")):
        for name, field in schema.type_map[type_name].fields.items():
            inner = get_named_type(field.type)
            body = name if is_leaf_type(inner) else f"{name} {{ {selection(inner, 1)} }}"
            queries.append((f"{list_field}.{name}", f"query($id: ID!) {{ task(id: $id) {{ {list_field} {{ {body} }} }} }}"))
    for root_field, arguments in (("agentHelp", '(id: $help)'), ("verifyTrace", "(task: $id)"), ("me", ""),
                                  ("erasures", "(first: 10)"), ("tasks", "(first: 5)")):
        inner = get_named_type(schema.query_type.fields[root_field].type)
        queries.append((root_field, f"query($id: ID!, $help: ID!) {{ {root_field}{arguments} "
                                    f"{{ {selection(inner, 3)} }} }}"))
    return queries


def nested_children(levels: int) -> str:
    return "children { __typename id depth " * levels + "sequence" + " }" * levels


HAND_WRITTEN = [
    ("fragment", "query($id: ID!) { task(id: $id) { ...Receipt children { ...Receipt } } } "
                 "fragment Receipt on AgentTask { id agent skill status about outcome cost { ownMicros allInMicros } }"),
    ("nested fragments", "query($id: ID!) { task(id: $id) { ...A } } fragment A on AgentTask { id ...B } "
                         "fragment B on AgentTask { record { ...Line } } fragment Line on TraceEvent { seq kind summary }"),
    ("inline fragments", "query($id: ID!) { task(id: $id) { ... on AgentTask { id status } record { ... on TraceEvent "
                         "{ seq payload } } } }"),
    ("aliases", "query($id: ID!) { a: task(id: $id) { x: id y: status record { s: seq k: kind p: payload } } "
                "b: task(id: $id) { x: agent } }"),
    ("same field twice", "query($id: ID!) { task(id: $id) { id id record { seq seq summary } } }"),
    ("typename everywhere", "query($id: ID!) { __typename task(id: $id) { __typename cost { __typename } "
                            "record { __typename call { __typename } } requester { __typename } } }"),
    ("unknown task", 'query { task(id: "00000000-0000-0000-0000-000000000000") { id about } }'),
    ("malformed id", 'query { task(id: "T-7") { id } }'),
    ("other task", "query($other: ID!) { task(id: $other) { id about given record { summary payload contentAccess } "
                   "transcript { turn response tools { name input output } } } }"),
    ("withheld", "query($quiet: ID!) { task(id: $quiet) { id given record { payload contentAccess } transcript "
                 "{ contentWithheld withheldReason systemPrompt } } }"),
    ("deep nesting", f"query($id: ID!) {{ task(id: $id) {{ id {nested_children(12)} }} }}"),
    ("deep tree", "query($id: ID!) { task(id: $id) { subtree { id depth path parent { id parent { id root { id } } } "
                  "lineage { id } record { seq task { id lineage { id } } } } } }"),
    ("lists of plain fields", "query($id: ID!) { task(id: $id) { record { seq kind at model tool isError costMicros "
                              "inputTokens hash prevHash erasedAt contentErasedAt } trace { seq } calls { id model "
                              "costMicros turn byTool } } }"),
    ("literal pages", "query($id: ID!) { task(id: $id) { children(first: 2) { id childCount } record(first: 3) "
                      "{ seq contentAccess withheldReason task { id agent skill } call { costSource } } "
                      "later: record(first: 2, after: 1) { seq payload call { id } } } }"),
    ("null arguments", "query($id: ID!, $none: Int) { task(id: $id) { children(first: null, after: null) { id "
                       "trace(first: $none, after: null) { seq } subtree(first: null) { id } } calls(after: null) "
                       "{ id } record(first: $none) { seq } } tasks(after: null, filter: null) "
                       "{ edges { node { id } } } }"),
    ("include and skip", "query($id: ID!, $yes: Boolean!) { task(id: $id) { id about @include(if: $yes) "
                         "given @skip(if: $yes) record { seq summary @skip(if: false) } } }"),
    ("filters", 'query { tasks(first: 10, filter: {status: DONE, rootsOnly: true}) { edges { cursor node { id '
                'status } } pageInfo { hasNextPage endCursor } } }'),
    ("edges of plain nodes", "query { tasks(first: 20) { totalCount edges { cursor node { id agent status startedAt "
                             "endedAt about given limitMicros } } } }"),
    ("filter denied", 'query { tasks(filter: {requester: "mia"}) { edges { node { id } } } }'),
    ("too many", "query { tasks(first: 501) { edges { node { id } } } }"),
    ("paged", "query { first: tasks(first: 1) { edges { cursor } } rest: tasks(first: 2) { edges { node { id } } } }"),
    ("verify", "query($id: ID!, $other: ID!) { a: verifyTrace(task: $id) { intact lines brokenAt problem erased } "
               "b: verifyTrace(task: $other) { intact lines erased } }"),
    ("help", "query($help: ID!) { agentHelp(id: $help) { id question answer askedOf { id name } answeredBy { id } "
             "task { id } } }"),
    ("me", "query { me { id name tenant roles } }"),
    ("erasure log", "query { erasures(first: 5) { kind why lines by { id } } }"),
    ("transcript", "query($id: ID!) { task(id: $id) { transcript { turn task { id } agent model at systemPrompt "
                   "messages response contentWithheld withheldReason tools { name toolCallId input output isError "
                   "durationMs sequence } } } }"),
    ("field error in a list", "query($id: ID!) { task(id: $id) { children { id about subtree { id } } } }"),
    ("a refused write", 'mutation { startTask(input: {agent: "Estimator", skill: "S", actor: {id: "e"}}) { id } }'),
    ("an erasure refused", 'mutation($id: ID!) { forgetAgentWork(task: $id) }'),
    ("a write of bad input", 'mutation { recordToolCall(input: {task: "T-7", tool: "x"}) { seq } }'),
    ("validation error", "query($id: ID!) { task(id: $id) { shoeSize } }"),
]
NOT_AS = {"a refused write": {"kit"}, "an erasure refused": {"privacy"}}
"""Readers for whom these writes would be carried out, and so change what the other executor reads."""


def corpus() -> list[tuple[str, str]]:
    return every_field_queries() + HAND_WRITTEN


def test_the_corpus_is_large_and_covers_every_field():
    queries = corpus()
    assert len({text for _, text in queries}) >= 100
    schema = build_schema()._schema
    covered = " ".join(text for _, text in queries)
    for type_name in ("AgentTask", "TraceEvent", "LlmCall", "AgentHelp", "AgentLlmTurn", "AgentToolCall", "Cost",
                      "Principal", "TraceCheck", "Viewer", "ErasureRecord", "AgentTaskConnection", "PageInfo"):
        for field_name in schema.type_map[type_name].fields:
            assert field_name in covered, f"{type_name}.{field_name} is in no query of the corpus"


@pytest.fixture
async def two_executors(database):
    clients = {}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=_app(database, "fast")),
                                 base_url="http://agentlog.test") as fast, \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=_app(database, "stock")),
                              base_url="http://agentlog.test") as stock:
        clients["fast"], clients["stock"] = fast, stock
        yield clients


def _app(database, executor: str):
    return create_app(load(database_url=database, executor=executor))


def test_the_setting_chooses_the_executor():
    with using(load(executor="stock")):
        stock = build_schema()
    assert stock.execution_context_class is not TreeExecution and not stock.fast
    with using(load(executor="fast")):
        fast = build_schema()
    assert fast.execution_context_class is TreeExecution and fast.fast
    with using(load(executor=Settings.model_fields["executor"].default)):
        assert build_schema().execution_context_class is TreeExecution


async def test_both_executors_answer_the_corpus_byte_for_byte_alike(client, two_executors):
    world = await build_world(client)
    variables = {"id": world.root, "other": world.erased, "quiet": world.withheld, "help": world.help, "yes": True,
                 "none": None}
    compared = 0
    errors_seen = denied_seen = 0
    for name, query in corpus():
        for reader, token in world.readers.items():
            if reader in NOT_AS.get(name, ()):
                continue
            used = {key: value for key, value in variables.items() if f"${key}" in query}
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            answers = {}
            for executor, http in two_executors.items():
                response = await http.post("/graphql", json={"query": query, "variables": used}, headers=headers)
                answers[executor] = (response.status_code, response.content)
            assert answers["fast"] == answers["stock"], (name, reader, answers)
            body = json.loads(answers["fast"][1])
            assert "INTERNAL" not in answers["fast"][1].decode(), (name, reader, body)
            errors_seen += bool(body.get("errors"))
            denied_seen += b'"DENIED"' in answers["fast"][1]
            compared += 1
    assert compared >= 100 * (len(world.readers) - 1) and errors_seen and denied_seen


@settings(max_examples=500, deadline=None)
@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999),
                    timezones=st.just(timezone.utc)))
def test_a_utc_time_is_written_as_isoformat_writes_it(at):
    assert utc_iso(at) == at.isoformat()


OPEN: ContextVar[str | None] = ContextVar("open", default=None)


@strawberry.type
class Opening:
    @strawberry.field
    async def held(self, name: str) -> str:
        """As a transaction does: sets a context variable, suspends, reads it back and resets it."""
        token = OPEN.set(name)
        await asyncio.sleep(0)
        held = OPEN.get()
        OPEN.reset(token)
        return f"{held}, then {OPEN.get()}"


@pytest.mark.parametrize("fast", [True, False])
async def test_a_resolver_that_sets_a_context_variable_across_a_suspension_keeps_its_own(fast):
    schema = strawberry.Schema(Opening, execution_context_class=TreeExecution if fast else None)
    result = await schema.execute('{ a: held(name: "a") b: held(name: "b") c: held(name: "c") }')
    assert result.errors is None
    assert result.data == {"a": "a, then None", "b": "b, then None", "c": "c, then None"}
