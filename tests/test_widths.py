"""Every text a check accepts fits the column it is stored in: the longest accepted value is stored whole, one
character more is BAD_INPUT naming the field. Every width-limited column is listed here, so a new one must be
tied to its check (or said to be written by the server) before this passes."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from tortoise.fields import CharField

import models
from models import AgentHelp, AgentTask, IdempotencyKey, LlmCall, ModelPrice, RegisteredAgent, TraceEvent
from models.rows.task import MAX_DEPTH
from permissions.tokens import CLAIM_CHARS, issue_token
from resolvers.write.checks import NAME_CHARS, PERSON_NAME_CHARS
from tests.shop import Shop

MODELS = [getattr(models, name) for name in models.__all__]
TASK, HELP = "<task>", "<help>"
BASES: dict[str, dict[str, Any]] = {
    "registerAgent": {"name": "Estimator"},
    "startTask": {"agent": "Estimator", "skill": "EstimateRepair", "actor": {"id": "estimator"}, "requester": {"id": "mia"}},
    "recordModelCall": {"task": TASK, "model": "Everyday", "inputTokens": 1, "outputTokens": 1, "costMicros": 1},
    "recordToolCall": {"task": TASK, "tool": "PartsFor"},
    "recordToolResult": {"task": TASK, "tool": "PartsFor"},
    "askForHelp": {"question": "Shall I order the pads?", "askedOf": {"id": "noor"}},
    "sendBack": {"help": HELP, "answer": "Yes.", "by": {"id": "noor"}},
    "setModelPrice": {"model": "Everyday", "inputMicrosPerMillion": 1, "outputMicrosPerMillion": 1},
}

# (mutation, the input's field path, the check's longest value, where it is stored)
STORED: list[tuple[str, str, int, list[tuple[type, str]]]] = [
    ("registerAgent", "name", NAME_CHARS, [(RegisteredAgent, "name")]),
    ("startTask", "skill", NAME_CHARS, [(AgentTask, "skill")]),
    ("startTask", "skillVersion", NAME_CHARS, [(AgentTask, "skill_version")]),
    ("startTask", "requester.id", NAME_CHARS, [(AgentTask, "requester_id")]),
    ("startTask", "requester.name", PERSON_NAME_CHARS, [(AgentTask, "requester_name")]),
    ("startTask", "actor.id", NAME_CHARS, [(AgentTask, "actor_id")]),
    ("startTask", "actor.name", PERSON_NAME_CHARS, [(AgentTask, "actor_name")]),
    ("startTask", "session", NAME_CHARS, [(AgentTask, "session")]),
    ("startTask", "workflowRun", NAME_CHARS, [(AgentTask, "workflow_run")]),
    ("startTask", "runStep", NAME_CHARS, [(AgentTask, "run_step")]),
    ("startTask", "entityType", NAME_CHARS, [(AgentTask, "entity_type")]),
    ("startTask", "entityId", NAME_CHARS, [(AgentTask, "entity_id")]),
    ("recordModelCall", "model", NAME_CHARS, [(TraceEvent, "model"), (LlmCall, "model")]),
    ("recordModelCall", "routeRule", NAME_CHARS, [(TraceEvent, "route_rule"), (LlmCall, "route_rule")]),
    ("recordModelCall", "provider", NAME_CHARS, [(LlmCall, "provider")]),
    ("recordModelCall", "byTool", NAME_CHARS, [(TraceEvent, "by_tool"), (LlmCall, "by_tool")]),
    ("recordToolCall", "tool", NAME_CHARS, [(TraceEvent, "tool")]),
    ("recordToolCall", "toolCallId", NAME_CHARS, [(TraceEvent, "tool_call_id")]),
    ("recordToolResult", "idempotencyKey", NAME_CHARS, [(IdempotencyKey, "key")]),
    ("askForHelp", "askedOf.id", NAME_CHARS, [(AgentHelp, "asked_of_id")]),
    ("askForHelp", "askedOf.name", PERSON_NAME_CHARS, [(AgentHelp, "asked_of_name")]),
    ("sendBack", "by.id", NAME_CHARS, [(AgentHelp, "answered_by_id")]),
    ("sendBack", "by.name", PERSON_NAME_CHARS, [(AgentHelp, "answered_by_name")]),
    ("setModelPrice", "model", NAME_CHARS, [(ModelPrice, "model")]),
    ("setModelPrice", "provider", NAME_CHARS, [(ModelPrice, "provider")]),
]
FROM_TOKEN = {"tenant": "tenant", "by_id": "sub", "by_name": "name"}
FROM_AGENT = {("AgentTask", "agent"), ("LlmCall", "agent")}
WRITTEN_BY_SERVER = {
    ("AgentTask", "cause"), ("AgentTask", "status"), ("AgentTask", "instructions_hash"), ("AgentTask", "path"),
    ("AgentTask", "chain_head"), ("AgentTask", "withheld"), ("TraceEvent", "kind"), ("TraceEvent", "withheld"),
    ("TraceEvent", "summary_salt"), ("TraceEvent", "payload_salt"), ("TraceEvent", "summary_hash"),
    ("TraceEvent", "payload_hash"), ("TraceEvent", "prev_hash"), ("TraceEvent", "hash"), ("LlmCall", "task_path"),
    ("RegisteredAgent", "logging"), ("AgentHelp", "withheld"), ("IdempotencyKey", "fingerprint"),
    ("IdempotencyKey", "result_id"), ("ErasureRecord", "kind"), ("LlmCall", "cost_source"), ("OtlpSpan", "kind"),
    ("OtlpSpan", "trace_id"), ("OtlpSpan", "span_id"), ("OtlpSpan", "parent_span_id"), ("OtlpPlacedSpan", "trace_id"),
    ("OtlpPlacedSpan", "span_id"), ("OtlpPlacedSpan", "parent_span_id"), ("OtlpPlacedSpan", "kind"),
    ("SignedCheckpoint", "head"), ("OtlpOpenTask", "trace_id"), ("OtlpOpenTask", "span_id"), ("Review", "verdict"),
    ("Review", "evaluator"), ("WebhookDelivery", "event"),
}


def width_limited_columns() -> set[tuple[str, str]]:
    return {
        (model.__name__, name)
        for model in MODELS
        for name, field in model._meta.fields_map.items()
        if isinstance(field, CharField)
    }


def test_every_width_limited_column_is_filled_by_a_check_listed_here_or_by_the_server():
    listed = {(model.__name__, column) for *_, stored in STORED for model, column in stored}
    from_token = {c for c in width_limited_columns() if c[1] in FROM_TOKEN}

    assert width_limited_columns() - listed - from_token - FROM_AGENT - WRITTEN_BY_SERVER == set()
    assert listed.isdisjoint(WRITTEN_BY_SERVER)


@pytest.mark.parametrize(("mutation", "path", "longest", "stored"), STORED, ids=[f"{m}.{p}" for m, p, *_ in STORED])
def test_each_check_allows_no_more_than_its_column_holds(mutation, path, longest, stored):
    for model, column in stored:
        assert longest <= model._meta.fields_map[column].max_length, f"{model.__name__}.{column}"


def test_token_claims_are_capped_at_their_columns():
    for column, claim in FROM_TOKEN.items():
        widths = {field.max_length for model in MODELS
                  for name, field in model._meta.fields_map.items() if name == column}
        assert CLAIM_CHARS[claim] <= min(widths), claim


def with_value(base: dict[str, Any], path: str, value: str) -> dict[str, Any]:
    data = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    *above, last = path.split(".")
    target = data
    for key in above:
        target = target.setdefault(key, {})
    target[last] = value
    return data


async def filled(shop: Shop, mutation: str, path: str, value: str) -> dict[str, Any]:
    """The mutation's input with `value` at `path`, and what it needs to exist first."""
    data = with_value(BASES[mutation], path, value)
    if data.get("task") == TASK:
        data["task"] = (await shop.start())["id"]
    if data.get("help") == HELP:
        asked = await shop.write("askForHelp", {"question": "Pads?", "askedOf": {"id": "noor"}})
        data["help"] = asked["id"]
    return data


async def send(shop: Shop, mutation: str, data: dict[str, Any]) -> dict:
    name = {"registerAgent": "RegisterAgentInput", "startTask": "StartTaskInput", "recordModelCall": "ModelCallInput",
            "recordToolCall": "ToolCallInput", "recordToolResult": "ToolResultInput", "askForHelp": "AskForHelpInput",
            "sendBack": "SendBackInput", "setModelPrice": "ModelPriceInput"}[mutation]
    query = f"mutation($input: {name}!) {{ {mutation}(input: $input) {{ __typename }} }}"
    return await shop.client.post(query, {"input": data}, shop.kit)


async def test_the_longest_accepted_value_is_stored_whole_and_one_more_character_is_refused(client):
    shop = Shop(client)
    await shop.setup()
    for mutation, path, longest, stored in STORED:
        value = f"{uuid.uuid4().hex}{'x' * longest}"[:longest]
        body = await send(shop, mutation, await filled(shop, mutation, path, value))
        assert "errors" not in body, (mutation, path, body)
        for model, column in stored:
            assert await model.filter(**{column: value}).exists(), f"{mutation}.{path} -> {model.__name__}.{column}"

        body = await send(shop, mutation, await filled(shop, mutation, path, value + "x"))
        error = body["errors"][0]
        assert error["extensions"]["code"] == "BAD_INPUT", (mutation, path, error)
        assert path.split(".")[-1] in error["message"] or path in error["message"], (mutation, path, error)


async def test_an_agent_name_as_long_as_allowed_starts_work(client):
    shop = Shop(client)
    name = "E" * NAME_CHARS
    await shop.setup(agent=name)

    task = await shop.start(agent=name)
    await shop.model_call(task["id"])

    assert await LlmCall.filter(task_id=task["id"], agent=name).exists()


async def test_sub_tasks_nest_as_deep_as_documented_and_one_more_level_is_refused(client):
    shop = Shop(client)
    await shop.setup()
    parent = (await shop.start())["id"]
    for _ in range(MAX_DEPTH):
        parent = (await shop.start(parent=parent))["id"]
    await shop.model_call(parent)

    assert (await AgentTask.get(id=parent)).depth == MAX_DEPTH
    body = await send(shop, "startTask", {**BASES["startTask"], "parent": parent})
    assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    assert "parent" in body["errors"][0]["message"] and str(MAX_DEPTH) in body["errors"][0]["message"]
    assert await AgentTask.filter(parent_id=parent).count() == 0


@pytest.mark.parametrize("claim", ["tenant", "sub", "name"])
async def test_an_over_long_claim_is_unauthenticated_and_writes_nothing(client, claim):
    longest = {"tenant": f"shop-{uuid.uuid4().hex}", "sub": "kit", "name": "Kit"}
    longest[claim] = (longest[claim] + "x" * CLAIM_CHARS[claim])[:CLAIM_CHARS[claim]]
    register = "mutation { registerAgent(input: {name: \"Estimator\"}) { name } }"

    fits = issue_token(longest["sub"], longest["tenant"], name=longest["name"], kit=True)
    assert "errors" not in await client.post(register, token=fits)

    over = {**longest, claim: longest[claim] + "x"}
    tenant = over["tenant"] if claim == "tenant" else f"shop-{uuid.uuid4().hex}"
    token = issue_token(over["sub"], tenant, name=over["name"], kit=True)
    error = (await client.post(register, token=token))["errors"][0]
    assert error["extensions"]["code"] == "UNAUTHENTICATED"
    assert claim in error["message"]
    written = await RegisteredAgent.filter(tenant__startswith=tenant[:CLAIM_CHARS["tenant"]]).count()
    assert written == (1 if claim == "tenant" else 0)
