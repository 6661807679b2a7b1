"""The session transcript over REST, for clients of the observability transcript API: Mia's chat with the Estimator
as a timeline, read by each person as far as they may."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime
from urllib.parse import quote

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode

from tests.shop import Client, Shop

PATH = "/agentic/observability/sessions/{}/transcript"
ROW_KEYS = [
    "event_timestamp", "agent_id", "iteration_id", "session_id", "operation", "provider", "model", "input_tokens",
    "output_tokens", "tool_name", "tool_call_id", "duration_ms", "status", "error_code", "error_message",
    "payload_truncated", "payload_text",
]
MARKER = " ... (truncated)"


def new_session() -> str:
    return f"chat:{uuid.uuid4().hex[:12]}"


async def transcript(client: Client, session: str, token: str | None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return await client.http.get(PATH.format(quote(session, safe="")), headers=headers)


async def rows(client: Client, session: str, token: str) -> list[dict]:
    response = await transcript(client, session, token)
    assert response.status_code == 200, response.text
    return response.json()["rows"]


async def test_a_session_reads_as_a_timeline_of_chats_tool_calls_and_the_output(client):
    shop = Shop(client)
    await shop.setup()
    session = new_session()
    task = await shop.estimate(session=session)

    response = await transcript(client, session, shop.mia)

    assert response.status_code == 200
    body = response.json()
    assert list(body) == ["session_id", "rows", "truncated"]
    assert body["session_id"] == session and body["truncated"] is False
    timeline = body["rows"]
    assert [r["operation"] for r in timeline] == ["chat", "tool_call", "chat", "tool_call", "chat", "output"]
    assert all(list(r) == ROW_KEYS for r in timeline)
    assert {(r["iteration_id"], r["agent_id"], r["session_id"]) for r in timeline} == {(task, "Estimator", session)}
    stamps = [datetime.fromisoformat(r["event_timestamp"]) for r in timeline]
    assert stamps == sorted(stamps)

    chat = timeline[0]
    assert (chat["provider"], chat["model"], chat["input_tokens"], chat["output_tokens"]) == ("scripted", "Everyday", 120, 30)
    assert chat["duration_ms"] == 40 and chat["status"] == "ok" and chat["tool_name"] is None
    assert json.loads(chat["payload_text"])["messages"] == [{"role": "user", "content": "T-7"}]

    parts = timeline[1]
    assert (parts["tool_name"], parts["tool_call_id"], parts["duration_ms"]) == ("PartsFor", "c1", 7)
    assert parts["payload_text"] == '{"input":{"fault":"rear brake does not bite"},"output":["brake pads","cable"]}'
    assert (parts["model"], parts["input_tokens"], parts["status"], parts["error_code"]) == (None, 0, "ok", None)

    output = timeline[-1]
    assert json.loads(output["payload_text"]) == {"hours": 1, "summary": "New pads and a cable.", "needsParts": True}
    assert output["status"] == "ok" and output["error_message"] is None
    assert all(r["payload_truncated"] is False for r in timeline)


async def test_sub_tasks_failures_and_tool_errors_are_in_the_timeline(client):
    shop = Shop(client)
    await shop.setup()
    session = new_session()
    root = (await shop.start(session=session))["id"]
    child = (await shop.start(parent=root))["id"]
    await shop.write("recordToolCall", {"task": child, "tool": "PartsFor", "input": {"fault": "spokes"}})
    await shop.write("recordToolResult", {"task": child, "tool": "PartsFor", "output": "The parts list is down.",
                                          "isError": True, "durationMs": 12})
    await shop.end(child, status="FAILED", outcome="The parts list was down.")
    await shop.end(root, status="STOPPED", outcome="Stopped after the sub-task failed.")

    timeline = await rows(client, session, shop.noor)

    assert [(r["operation"], r["iteration_id"]) for r in timeline] == [
        ("tool_call", child), ("output", child), ("output", root),
    ]
    tool, failed, stopped = timeline
    assert (tool["status"], tool["error_code"], tool["duration_ms"]) == ("error", "tool_error", 12)
    assert tool["payload_text"] == '{"input":{"fault":"spokes"},"output":"The parts list is down."}'
    assert (failed["status"], failed["error_code"], failed["error_message"]) == (
        "error", "task_failed", "The parts list was down.")
    assert (stopped["status"], stopped["error_code"], stopped["error_message"]) == ("ok", None, None)
    assert tool["session_id"] == session


async def test_a_long_payload_is_cut_on_a_character_boundary_and_marked(client):
    shop = Shop(client)
    await shop.setup()
    session = new_session()
    task = (await shop.start(session=session))["id"]
    long_text = "é" * 20_000 + "€" * 10_000
    await shop.model_call(task, messages=[{"role": "user", "content": long_text}])
    await shop.model_call(task, messages=[{"role": "user", "content": "short"}])

    cut, whole = await rows(client, session, shop.mia)

    sent = cut["payload_text"]
    assert cut["payload_truncated"] is True and sent.endswith(MARKER)
    assert 32_768 - 3 <= len(sent.encode("utf-8")) <= 32_768
    stored = json.dumps({"systemPrompt": "You estimate bicycle repairs.", "messages": [{"role": "user", "content": long_text}],
                         "response": {"toolCalls": [{"name": "PartsFor"}]}}, separators=(",", ":"), ensure_ascii=False)
    assert stored.startswith(sent[: -len(MARKER)])
    assert whole["payload_truncated"] is False and not whole["payload_text"].endswith(MARKER)


async def test_more_rows_than_the_cap_are_cut_to_the_oldest_and_marked(client, configure):
    shop = Shop(client)
    await shop.setup()
    session = new_session()
    await shop.estimate(session=session)
    everything = await rows(client, session, shop.mia)

    configure(transcript_row_cap=4)
    response = await transcript(client, session, shop.mia)

    assert response.json()["truncated"] is True
    assert response.json()["rows"] == everything[:4]


async def test_each_reader_sees_the_content_they_may_read(client):
    shop = Shop(client)
    await shop.setup()
    session = new_session()
    task = (await shop.start(session=session, requester={"id": "sam"}))["id"]
    await shop.model_call(task)
    await shop.end(task, status="FAILED", outcome="Sam's bike needs a new frame.", result={"hours": 9})

    def content(timeline: list[dict]) -> list:
        return [(r["payload_text"] is not None, r["error_message"]) for r in timeline]

    sam = await rows(client, session, shop.person("sam"))
    auditor = await rows(client, session, shop.person("ada", "Auditor"))
    manager = await rows(client, session, shop.person("max", "Manager"))
    accountant = await rows(client, session, shop.person("abe", "Accountant"))
    kit = await rows(client, session, shop.kit)
    stranger = await rows(client, session, shop.mia)

    said = "Sam's bike needs a new frame."
    assert content(sam) == content(auditor) == [(True, None), (True, said)]
    assert content(manager) == [(False, None), (False, said)]
    assert content(accountant) == content(kit) == [(False, None), (False, None)]
    assert [r["operation"] for r in accountant] == ["chat", "output"]
    assert stranger == []


async def test_a_requester_of_a_sub_task_reads_only_that_sub_task(client):
    shop = Shop(client)
    await shop.setup()
    session = new_session()
    root = (await shop.start(session=session, requester={"id": "sam"}))["id"]
    await shop.model_call(root)
    child = (await shop.start(parent=root, requester={"id": "mia"}))["id"]
    await shop.model_call(child)

    timeline = await rows(client, session, shop.mia)

    assert [r["iteration_id"] for r in timeline] == [child]


async def test_content_that_was_never_kept_is_null_for_everyone(client):
    shop = Shop(client)
    await shop.setup(logging="METADATA_ONLY")
    session = new_session()
    await shop.estimate(session=session)

    timeline = await rows(client, session, shop.mia)

    assert len(timeline) == 6 and all(r["payload_text"] is None for r in timeline)
    assert timeline[0]["model"] == "Everyday" and timeline[1]["tool_name"] == "PartsFor"


async def test_another_tenants_session_answers_like_an_unknown_one(client):
    shop, elsewhere = Shop(client), Shop(client)
    await shop.setup()
    await elsewhere.setup()
    session = new_session()
    await shop.estimate(session=session)

    theirs = await transcript(client, session, elsewhere.person("noor", "Auditor"))
    unknown = await transcript(client, new_session(), shop.noor)

    assert theirs.status_code == unknown.status_code == 200
    assert theirs.json() == {"session_id": session, "rows": [], "truncated": False}
    assert unknown.json()["rows"] == [] and unknown.json()["truncated"] is False


@pytest.mark.parametrize(("session", "kind"), [
    ("s" * 257, "string_too_long"),
    ("chat 7", "string_pattern_mismatch"),
    ("chat*7", "string_pattern_mismatch"),
    ("séance", "string_pattern_mismatch"),
    ("chat7\n", "string_pattern_mismatch"),
])
async def test_a_malformed_session_id_answers_422_in_the_validation_shape(client, session, kind):
    shop = Shop(client)

    response = await transcript(client, session, shop.mia)

    assert response.status_code == 422
    (detail,) = response.json()["detail"]
    assert detail["type"] == kind
    assert detail["loc"] == ["path", "session_id"]
    assert detail["input"] == session and detail["msg"]


async def test_a_session_id_of_256_allowed_characters_is_accepted(client):
    response = await transcript(client, "a.b_c:d-" * 32, Shop(client).mia)

    assert response.status_code == 200


@pytest.mark.parametrize("authorization", [None, "Bearer not-a-token", "Basic bWlhOm1pYQ=="])
async def test_a_missing_or_bad_token_answers_401(client, authorization):
    headers = {"Authorization": authorization} if authorization else {}

    for session in (new_session(), "s" * 300):
        response = await client.http.get(PATH.format(session), headers=headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.json()["detail"]


async def test_the_openapi_document_describes_the_endpoint_in_the_published_shapes(client):
    document = (await client.http.get("/openapi.json")).json()

    operation = document["paths"]["/agentic/observability/sessions/{session_id}/transcript"]["get"]
    schemas = document["components"]["schemas"]
    assert operation["operationId"] == "getAgenticObservabilitySessionTranscript"
    assert set(operation["responses"]) >= {"200", "422"}
    assert list(schemas["ObservabilityTranscriptRow"]["properties"]) == ROW_KEYS
    assert schemas["ObservabilityTranscriptRow"]["required"] == [
        "event_timestamp", "agent_id", "iteration_id", "operation", "status"]
    assert list(schemas["ObservabilityTranscriptResponse"]["properties"]) == ["session_id", "rows", "truncated"]
    assert schemas["HTTPValidationError"]["properties"]["detail"]["items"] == {"$ref": "#/components/schemas/ValidationError"}
    assert schemas["ValidationError"]["required"] == ["loc", "msg", "type"]


@pytest.fixture(scope="module")
def transcript_api(servers) -> schemathesis.BaseSchema:
    """The OpenAPI document as a running server serves it."""
    return schemathesis.openapi.from_url(f"{servers[0].url}/openapi.json")


@pytest.fixture(scope="module")
def api_shop(servers) -> tuple[Shop, str]:
    """A tenant with a finished session, written through the server the API tests call."""

    async def write() -> tuple[Shop, str]:
        async with httpx.AsyncClient(base_url=servers[0].url, timeout=30) as http:
            shop = Shop(Client(http))
            await shop.setup()
            session = new_session()
            await shop.estimate(session=session)
            return shop, session

    return asyncio.run(write())


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_the_endpoint_keeps_to_its_openapi_document(transcript_api, api_shop, mode):
    shop, _ = api_shop
    operations = [result.ok() for result in transcript_api.get_all_operations()]
    assert [op.label for op in operations] == ["GET /agentic/observability/sessions/{session_id}/transcript"]

    @given(case=operations[0].as_strategy(generation_mode=mode))
    @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
    def keeps_to_it(case: schemathesis.Case) -> None:
        case.call_and_validate(headers={"Authorization": f"Bearer {shop.noor}"})

    keeps_to_it()


def test_a_real_session_keeps_to_the_openapi_document(transcript_api, api_shop):
    shop, session = api_shop
    operation = transcript_api["/agentic/observability/sessions/{session_id}/transcript"]["GET"]
    case = operation.Case(path_parameters={"session_id": session})

    response = case.call_and_validate(headers={"Authorization": f"Bearer {shop.mia}"})

    assert [row["operation"] for row in response.json()["rows"]] == ["chat", "tool_call", "chat", "tool_call", "chat", "output"]
