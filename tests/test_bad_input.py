"""Every refused write gets a clear error with extensions.code, names the field, and writes nothing."""

import json
import uuid
from datetime import timedelta

import graphql
import pytest

import resolvers.write.lines
from models import AgentHelp, AgentTask, LlmCall
from permissions.tokens import issue_token
from resolvers.write.checks import JSON_BYTES, LINE_CHARS
from tests.shop import Shop, work, work_lines
from tests.test_every_mutation_guarded import ERASURES, HOLDS, REVIEWS, SCHEMA

CALL = "mutation($input: ModelCallInput!) { recordModelCall(input: $input) { seq } }"
START = "mutation($input: StartTaskInput!) { startTask(input: $input) { id } }"
END = "mutation($input: EndTaskInput!) { endTask(input: $input) { id } }"
TOOL = "mutation($input: ToolCallInput!) { recordToolCall(input: $input) { seq } }"
ASK = "mutation($input: AskForHelpInput!) { askForHelp(input: $input) { id } }"
ANSWER = "mutation($input: SendBackInput!) { sendBack(input: $input) { id } }"
REVIEW = "mutation($input: ReviewInput!) { reviewTask(input: $input) { verdict } }"
HOLD = "mutation($input: HoldInput!) { holdWork(input: $input) { id } }"
RELEASE = "mutation($input: HoldInput!) { releaseHold(input: $input) { id } }"


async def running(client) -> tuple[Shop, str]:
    shop = Shop(client)
    await shop.setup()
    return shop, (await shop.start())["id"]


async def footprint(shop: Shop) -> tuple[int, int, int, int]:
    return (
        await work(shop.tenant).count(),
        await work_lines(shop.tenant).count(),
        await LlmCall.filter(tenant=shop.tenant).count(),
        await AgentHelp.filter(tenant=shop.tenant).count(),
    )


def call(task: str, **fields) -> dict:
    return {"input": {"task": task, "model": "Everyday", "inputTokens": 1, "outputTokens": 1, "costMicros": 1, **fields}}


@pytest.mark.parametrize(
    "fields, named",
    [
        ({"inputTokens": -1}, "inputTokens"),
        ({"outputTokens": -5}, "outputTokens"),
        ({"costMicros": -200}, "costMicros"),
        ({"attempts": 0}, "attempts"),
        ({"durationMs": -1}, "durationMs"),
        ({"model": ""}, "model"),
        ({"model": "m" * 201}, "model"),
        ({"summary": "s" * (LINE_CHARS + 1)}, "summary"),
        ({"messages": ["x" * JSON_BYTES]}, "messages"),
    ],
)
async def test_a_bad_model_call_is_bad_input_and_writes_nothing(client, fields, named):
    shop, task = await running(client)
    before = await footprint(shop)

    error = await client.error(CALL, call(task, **fields), shop.kit)

    assert error["extensions"]["code"] == "BAD_INPUT"
    assert named in error["message"]
    assert error["extensions"]["field"] == f"input.{named}"
    assert await footprint(shop) == before


LINES = "mutation($input: RecordLinesInput!) { recordLines(input: $input) { firstSeq } }"


async def test_a_bad_line_in_a_batch_is_named_by_its_place_in_lines(client):
    shop, task = await running(client)
    before = await footprint(shop)
    good = {"modelCall": {"model": "Everyday", "inputTokens": 1, "outputTokens": 1, "costMicros": 1}}
    bad = {"modelCall": {"model": "Everyday", "inputTokens": 1, "outputTokens": 1, "costMicros": -200}}

    error = await client.error(LINES, {"input": {"task": task, "lines": [good, good, good, bad]}}, shop.kit)

    assert error["extensions"] == {"code": "BAD_INPUT", "field": "lines[3].modelCall.costMicros"}
    assert await footprint(shop) == before


def kit_write(name: str, input_type: str) -> str:
    return f"mutation($input: {input_type}!) {{ {name}(input: $input) {{ __typename }} }}"


REGISTER = kit_write("registerAgent", "RegisterAgentInput")
POLICIES = kit_write("definePolicies", "PoliciesInput")
PRICE = kit_write("setModelPrice", "ModelPriceInput")
RESULT = kit_write("recordToolResult", "ToolResultInput")
ERASE = "mutation($task: ID!, $why: String!) { eraseAgentWorkContent(task: $task, why: $why) }"
ANONYMISE = "mutation($task: ID!, $why: String!) { anonymiseAgentWork(task: $task, why: $why) }"
FORGET = "mutation($task: ID!) { forgetAgentWork(task: $task) }"
ERASE_HELP = "mutation($help: ID!, $why: String!) { eraseAgentHelp(help: $help, why: $why) }"
STOP = "mutation($input: StopTaskInput!) { stopTask(input: $input) { id } }"
WEBHOOK = "mutation($input: WebhookInput!) { defineWebhook(input: $input) { id } }"
REMOVE_WEBHOOK = "mutation($id: ID!) { removeWebhook(id: $id) }"
NOT_UNICODE = "\ud800"
MODEL = {"model": "Everyday", "inputTokens": 1, "outputTokens": 1, "costMicros": 1}
STARTING = {"agent": "Estimator", "skill": "X", "actor": {"id": "a"}}


def started(**fields) -> dict:
    return {"input": {**STARTING, **fields}}


def batch(task: str, *lines: dict) -> dict:
    return {"input": {"task": task, "lines": list(lines)}}


BAD_INPUTS = {
    "not a number": (CALL, lambda task: call(task, inputTokens="lots"), "input.inputTokens"),
    "content not Unicode": (CALL, lambda task: call(task, messages=[NOT_UNICODE]), "input.messages"),
    "content too large together": (
        CALL, lambda task: call(task, messages=["m" * (JSON_BYTES // 2)], response="r" * (JSON_BYTES // 2 + 10)),
        "input.response"),
    "missing": (START, lambda task: {"input": {"skill": "X", "actor": {"id": "a"}}}, "input.agent"),
    "missing inside": (START, lambda task: {"input": {"agent": "Estimator", "skill": "X", "actor": {"name": "Mia"}}},
                       "input.actor.id"),
    "empty inside": (START, lambda task: started(requester={"id": ""}), "input.requester.id"),
    "agent not registered": (START, lambda task: started(agent="Nobody"), "input.agent"),
    "parent not a task id": (START, lambda task: started(parent="not-a-uuid"), "input.parent"),
    "below zero": (START, lambda task: started(limitMicros=-1), "input.limitMicros"),
    "name empty": (REGISTER, lambda task: {"input": {"name": ""}}, "input.name"),
    "one of a list empty": (REGISTER, lambda task: {"input": {"name": "Helper", "transcriptReaders": ["Manager", ""]}},
                            "input.transcriptReaders[1]"),
    "capability's role empty": (POLICIES, lambda task: {"input": {"auditsAgents": [""]}}, "input.auditsAgents[0]"),
    "too many days": (POLICIES, lambda task: {"input": {"retainDays": 40_000}}, "input.retainDays"),
    "tool empty": (TOOL, lambda task: {"input": {"task": task, "tool": ""}}, "input.tool"),
    "tool input not Unicode": (TOOL, lambda task: {"input": {"task": task, "tool": "T", "input": NOT_UNICODE}},
                               "input.input"),
    "result's duration below zero": (RESULT, lambda task: {"input": {"task": task, "tool": "T", "durationMs": -1}},
                                     "input.durationMs"),
    "tool output not Unicode": (RESULT, lambda task: {"input": {"task": task, "tool": "T", "output": NOT_UNICODE}},
                                "input.output"),
    "question empty": (ASK, lambda task: {"input": {"question": "", "askedOf": {"id": "mia"}}}, "input.question"),
    "asked of no one": (ASK, lambda task: {"input": {"question": "Q?", "askedOf": {"id": ""}}}, "input.askedOf.id"),
    "help in no task": (ASK, lambda task: {"input": {"task": "nope", "question": "Q?", "askedOf": {"id": "mia"}}},
                        "input.task"),
    "help not an id": (ANSWER, lambda task: {"input": {"help": "nope", "answer": "A.", "by": {"id": "mia"}}},
                       "input.help"),
    "answered by no one": (ANSWER, lambda task: {"input": {"help": str(uuid.uuid4()), "answer": "A.", "by": {"id": ""}}},
                           "input.by.id"),
    "ending running": (END, lambda task: {"input": {"task": task, "status": "RUNNING"}}, "input.status"),
    "not a task id": (END, lambda task: {"input": {"task": "not-a-uuid", "status": "DONE"}}, "input.task"),
    "outcome too long": (END, lambda task: {"input": {"task": task, "status": "DONE", "outcome": "o" * (LINE_CHARS + 1)}},
                         "input.outcome"),
    "result not Unicode": (END, lambda task: {"input": {"task": task, "status": "DONE", "result": NOT_UNICODE}},
                           "input.result"),
    "no lines": (LINES, lambda task: batch(task), "lines"),
    "a line of two kinds": (LINES, lambda task: batch(task, {"modelCall": MODEL, "toolCall": {"tool": "T"}}),
                            "lines[0]"),
    "a line's field missing": (LINES, lambda task: batch(task, {"modelCall": {"model": "Everyday"}}),
                               "lines[0].modelCall.inputTokens"),
    "a line's field": (LINES, lambda task: batch(task, {"modelCall": MODEL}, {"toolResult": {"tool": "T", "durationMs": -1}}),
                       "lines[1].toolResult.durationMs"),
    "price's model empty": (PRICE, lambda task: {"input": {"model": "", "inputMicrosPerMillion": 1,
                                                           "outputMicrosPerMillion": 1}}, "input.model"),
    "price without a time zone": (PRICE, lambda task: {"input": {
        "model": "Everyday", "inputMicrosPerMillion": 1, "outputMicrosPerMillion": 1,
        "effectiveFrom": "2026-01-01T00:00:00"}}, "input.effectiveFrom"),
    "erasure without a reason": (ERASE, lambda task: {"task": task, "why": ""}, "why"),
    "anonymising without a reason": (ANONYMISE, lambda task: {"task": task, "why": ""}, "why"),
    "forgetting no id": (FORGET, lambda task: {"task": {"id": task}}, "task"),
    "erasing help without a reason": (ERASE_HELP, lambda task: {"help": str(uuid.uuid4()), "why": ""}, "why"),
    "review's note too long": (REVIEW, lambda task: {"input": {"task": task, "verdict": "NOTED",
                                                                "note": "n" * (LINE_CHARS + 1)}}, "input.note"),
    "review of no task id": (REVIEW, lambda task: {"input": {"task": "nope", "verdict": "NOTED"}}, "input.task"),
    "hold without a reason": (HOLD, lambda task: {"input": {"task": task, "reason": ""}}, "input.reason"),
    "release without a reason": (RELEASE, lambda task: {"input": {"task": task, "reason": " "}}, "input.reason"),
    "stopping without a reason": (STOP, lambda task: {"input": {"task": task, "reason": " "}}, "input.reason"),
    "stopping no task id": (STOP, lambda task: {"input": {"task": "not-a-uuid", "reason": "Done."}}, "input.task"),
    "a stop's reason too long": (STOP, lambda task: {"input": {"task": task, "reason": "r" * (LINE_CHARS + 1)}},
                                 "input.reason"),
    "a webhook's unknown event": (WEBHOOK, lambda task: {"input": {"url": "https://example.com/h",
                                                                  "events": ["AgentTaskExploded"]}}, "input.events"),
    "a webhook's secret not whsec_": (WEBHOOK, lambda task: {"input": {"url": "https://example.com/h", "events": [
        "CHAIN_BROKEN"], "secret": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"}}, "input.secret"),
    "a webhook on loopback": (WEBHOOK, lambda task: {"input": {"url": "http://127.0.0.1:8000/h",
                                                              "events": ["STAND_IN"]}}, "input.url"),
    "removing no webhook id": (REMOVE_WEBHOOK, lambda task: {"id": "not-a-uuid"}, "id"),
    "written into the document": ('mutation { startTask(input: {agent: "Estimator", skill: "X", actor: {id: 5}}) { id } }',
                                  lambda task: None, "input.actor.id"),
    "a line written into the document": (
        'mutation { recordLines(input: {task: "t", lines: [{modelCall: {model: "m", inputTokens: 1}}]}) { firstSeq } }',
        lambda task: None, "lines[0].modelCall.outputTokens"),
    "an argument": ("query { tasks(first: 0) { edges { cursor } } }", lambda task: None, "first"),
}


def mutation_of(document: str) -> str | None:
    operation = graphql.parse(document).definitions[0]
    return operation.selection_set.selections[0].name.value if operation.operation.value == "mutation" else None


def test_every_mutation_has_its_bad_inputs_walked():
    walked = {mutation_of(document) for document, _, _ in BAD_INPUTS.values()}

    assert set(SCHEMA.mutation_type.fields) <= walked


async def posted_error(client, query: str, variables: dict | None, token: str) -> dict:
    """The first error, for input sent as ASCII JSON, so a lone surrogate travels as its escape."""
    response = await client.http.post("/graphql", content=json.dumps({"query": query, "variables": variables or {}}),
                                      headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    return response.json()["errors"][0]


@pytest.mark.parametrize("query, variables, field", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
async def test_bad_input_names_the_path_of_the_argument_at_fault(client, query, variables, field):
    shop, task = await running(client)
    await client.ok("mutation { definePolicies(input: {holdsRecords: [\"Counsel\"]}) { holdsRecords } }",
                    token=shop.kit)
    tokens = {**dict.fromkeys(ERASURES, shop.person("pia", "Privacy")), **dict.fromkeys(REVIEWS, shop.noor),
              **dict.fromkeys(HOLDS, shop.person("carla", "Counsel")), "stopTask": shop.noor}
    token = tokens.get(mutation_of(query), shop.kit)
    if query in (ERASE, ANONYMISE):
        await shop.end(task)
    before = await footprint(shop)

    error = await posted_error(client, query, variables(task), token)

    assert (error["extensions"]["code"], error["extensions"].get("field")) == ("BAD_INPUT", field), error
    assert await footprint(shop) == before


async def test_a_number_past_64_bits_is_bad_input(client):
    shop, task = await running(client)

    error = await client.error(CALL, call(task, costMicros=2**63), shop.kit)

    assert error["extensions"]["code"] == "BAD_INPUT"


async def test_a_number_past_64_bits_written_into_the_query_is_bad_input_and_writes_nothing(client):
    shop, task = await running(client)
    before = await footprint(shop)
    literal = (f'mutation {{ recordModelCall(input: {{task: "{task}", model: "Everyday", inputTokens: 1, '
               f'outputTokens: {2**63}, costMicros: 1}}) {{ seq }} }}')

    error = await client.error(literal, token=shop.kit)

    assert error["extensions"]["code"] == "BAD_INPUT"
    assert "64 bits" in error["message"]
    assert await footprint(shop) == before


async def test_sums_past_2_to_the_31_are_kept_exactly(client):
    shop, task = await running(client)

    await client.ok(CALL, call(task, costMicros=3_000_000_000, inputTokens=2**40), shop.kit)

    receipt = await shop.read(task, shop.mia)
    assert receipt["spentMicros"] == 3_000_000_000 and receipt["inputTokens"] == 2**40


async def test_a_malformed_task_id_is_bad_input(client):
    shop, _ = await running(client)

    error = await client.error(CALL, call("not-a-uuid"), shop.kit)

    assert error["extensions"]["code"] == "BAD_INPUT" and "task" in error["message"]


async def test_an_unknown_task_is_not_found(client):
    shop, _ = await running(client)

    error = await client.error(CALL, call(str(uuid.uuid4())), shop.kit)

    assert error["extensions"]["code"] == "NOT_FOUND"


async def test_an_unregistered_agent_is_bad_input(client):
    shop, _ = await running(client)
    before = await footprint(shop)

    error = await client.error(START, {"input": {"agent": "Nobody", "skill": "X", "actor": {"id": "a"}}}, shop.kit)

    assert error["extensions"]["code"] == "BAD_INPUT" and "agent" in error["message"]
    assert await footprint(shop) == before


async def test_an_unknown_parent_is_not_found(client):
    shop, _ = await running(client)
    before = await footprint(shop)

    error = await client.error(
        START, {"input": {"agent": "Estimator", "skill": "X", "actor": {"id": "a"}, "parent": str(uuid.uuid4())}}, shop.kit
    )

    assert error["extensions"]["code"] == "NOT_FOUND" and "parent" in error["message"]
    assert await footprint(shop) == before


async def test_ending_with_running_is_bad_input(client):
    shop, task = await running(client)

    error = await client.error(END, {"input": {"task": task, "status": "RUNNING"}}, shop.kit)

    assert error["extensions"]["code"] == "BAD_INPUT" and "status" in error["message"]
    assert (await AgentTask.get(id=task)).status == "RUNNING"


async def test_an_append_to_an_ended_task_is_a_conflict(client):
    shop, task = await running(client)
    await shop.end(task)
    before = await footprint(shop)

    error = await client.error(TOOL, {"input": {"task": task, "tool": "PartsFor"}}, shop.kit)

    assert error["extensions"]["code"] == "CONFLICT"
    assert await footprint(shop) == before


async def test_ending_twice_is_a_conflict(client):
    shop, task = await running(client)
    await shop.end(task)

    error = await client.error(END, {"input": {"task": task, "status": "FAILED"}}, shop.kit)

    assert error["extensions"]["code"] == "CONFLICT"


async def test_a_sub_task_under_an_ended_parent_is_a_conflict(client):
    shop, task = await running(client)
    await shop.end(task)
    before = await footprint(shop)

    error = await client.error(
        START, {"input": {"agent": "Estimator", "skill": "X", "actor": {"id": "a"}, "parent": task}}, shop.kit
    )

    assert error["extensions"]["code"] == "CONFLICT" and "parent" in error["message"]
    assert await footprint(shop) == before


async def test_a_second_answer_is_a_conflict(client):
    shop, task = await running(client)
    help = (await client.ok(ASK, {"input": {"task": task, "question": "Rear or front?", "askedOf": {"id": "mia"}}},
                            shop.kit))["askForHelp"]["id"]
    await client.ok(ANSWER, {"input": {"help": help, "answer": "Rear.", "by": {"id": "mia"}}}, shop.kit)
    before = await footprint(shop)

    error = await client.error(ANSWER, {"input": {"help": help, "answer": "Front.", "by": {"id": "mia"}}}, shop.kit)

    assert error["extensions"]["code"] == "CONFLICT"
    assert await footprint(shop) == before


async def test_an_unknown_help_is_not_found(client):
    shop, _ = await running(client)

    error = await client.error(ANSWER, {"input": {"help": str(uuid.uuid4()), "answer": "x", "by": {"id": "mia"}}}, shop.kit)

    assert error["extensions"]["code"] == "NOT_FOUND"


async def test_a_person_may_not_write(client):
    shop, task = await running(client)
    before = await footprint(shop)

    error = await client.error(TOOL, {"input": {"task": task, "tool": "PartsFor"}}, shop.noor)

    assert error["extensions"]["code"] == "FORBIDDEN"
    assert await footprint(shop) == before


@pytest.mark.parametrize("token", [
    None,
    "not-a-token",
    issue_token("agent-kit", "shop", kit=True, ttl=timedelta(seconds=-5)),
    issue_token("agent-kit", "shop", kit=True, key="some-other-secret-of-thirty-two-bytes!!"),
], ids=["missing", "garbage", "expired", "badly-signed"])
async def test_without_a_good_token_nothing_is_written(client, token):
    shop, task = await running(client)
    before = await footprint(shop)

    error = await client.error(TOOL, {"input": {"task": task, "tool": "PartsFor"}}, token)

    assert error["extensions"]["code"] == "UNAUTHENTICATED"
    assert await footprint(shop) == before


async def test_the_line_and_its_meter_row_are_written_together(client, monkeypatch):
    shop, task = await running(client)
    before = await footprint(shop)

    async def broken_append(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(resolvers.write.lines, "append_many", broken_append)
    error = await client.error(CALL, call(task), shop.kit)

    assert error["extensions"]["code"] == "INTERNAL"
    assert "disk full" not in error["message"]
    assert await footprint(shop) == before
