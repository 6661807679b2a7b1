"""One log line per request under its request id, sent back in X-Request-Id; never a token, sentence or content."""

import io
import json
import logging
import re
import sys

import pytest

import resolvers.write.lines
from graph.http import logs
from tests.shop import Shop

START = "mutation($input: StartTaskInput!) { startTask(input: $input) { id } }"
CALL = "mutation($input: ModelCallInput!) { recordModelCall(input: $input) { seq } }"


def start_input() -> dict:
    return {"agent": "Estimator", "skill": "EstimateRepair", "about": "Ticket T-9", "requester": {"id": "mia"},
            "actor": {"id": "estimator"}}


async def post(client, query: str, variables: dict, token: str, request_id: str | None = None):
    headers = {"Authorization": f"Bearer {token}"}
    if request_id:
        headers["X-Request-Id"] = request_id
    return await client.http.post("/graphql", json={"query": query, "variables": variables}, headers=headers)


def request_lines(caplog, request_id: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "agentlog.request" and getattr(r, "request_id", None) == request_id]


async def test_a_request_is_logged_once_under_the_id_it_brought(client, caplog):
    shop = Shop(client)
    await shop.setup()

    with caplog.at_level(logging.INFO, logger="agentlog.request"):
        response = await post(client, START, {"input": start_input()}, shop.kit, "deploy-7.req-1")

    assert response.headers["x-request-id"] == "deploy-7.req-1"
    [line] = request_lines(caplog, "deploy-7.req-1")
    assert (line.operation, line.outcome, line.tenant, line.principal) == ("startTask", "OK", shop.tenant, "agent-kit")
    assert line.duration_ms > 0


async def test_a_request_without_an_id_gets_one_and_a_refusal_logs_its_code(client, caplog):
    shop = Shop(client)
    await shop.setup()

    with caplog.at_level(logging.INFO, logger="agentlog.request"):
        response = await post(client, START, {"input": start_input()}, shop.mia)

    made = response.headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{12}", made)
    [line] = request_lines(caplog, made)
    assert (line.operation, line.outcome, line.principal) == ("startTask", "FORBIDDEN", "mia")


async def test_an_id_that_is_not_a_plain_token_is_replaced(client):
    response = await client.http.get("/healthz", headers={"X-Request-Id": "two words"})

    assert re.fullmatch(r"[0-9a-f]{12}", response.headers["x-request-id"])


async def test_an_internal_error_logs_its_traceback_under_the_request_id(client, caplog, monkeypatch):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    async def broken_append(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(resolvers.write.lines, "append_many", broken_append)
    call = {"task": task, "model": "Everyday", "inputTokens": 1, "outputTokens": 1, "costMicros": 1}
    with caplog.at_level(logging.INFO):
        body = (await post(client, CALL, {"input": call}, shop.kit, "req-internal-1")).json()

    assert "req-internal-1" in body["errors"][0]["message"]
    [traceback] = [r for r in caplog.records if r.levelno == logging.ERROR and "req-internal-1" in r.getMessage()]
    assert traceback.exc_info is not None and "disk full" in str(traceback.exc_info[1])
    [line] = request_lines(caplog, "req-internal-1")
    assert (line.operation, line.outcome) == ("recordModelCall", "INTERNAL")


@pytest.fixture(params=["json", "text"])
def server_log(request, monkeypatch):
    """The server's log as `agentlog serve` sets it up, at DEBUG, for every logger."""
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    root = logging.getLogger()
    saved = (list(root.handlers), root.level, {n: logging.getLogger(n).level for n in logs.QUIET})
    logs.configure(request.param, "DEBUG")
    yield request.param, stream
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in saved[0]:
        root.addHandler(handler)
    root.setLevel(saved[1])
    for name, level in saved[2].items():
        logging.getLogger(name).setLevel(level)


CONTENT = [
    "rear brake does not bite", "New pads and a cable", "You estimate bicycle repairs", "Ticket T-7",
    "Mia asked for an estimate", "brake pads", "Estimated one hour", "Noted on T-7", "asked for a tool", "toolCalls",
]


async def test_no_token_sentence_or_content_reaches_the_log_at_any_level(client, server_log, monkeypatch):
    kind, stream = server_log
    shop = Shop(client)
    await shop.setup(transcript_readers=["Manager"])
    task = await shop.estimate()
    everything = "about given result record { summary payload } transcript { systemPrompt messages response }"
    await shop.read(task, shop.noor, everything)
    await client.error("{ task(id: 1) { nope } }", token=shop.mia)

    async def broken_append(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(resolvers.write.lines, "append_many", broken_append)
    running = (await shop.start(given="Ticket T-7: rear brake does not bite."))["id"]
    await client.error(CALL, {"input": {"task": running, "model": "Everyday", "inputTokens": 1, "outputTokens": 1,
                                        "costMicros": 1, "systemPrompt": "You estimate bicycle repairs."}}, shop.kit)

    written = stream.getvalue()
    assert "agentlog.request" in written and "disk full" in written
    assert "eyJ" not in written and "Bearer" not in written
    for text in CONTENT:
        assert text not in written, text
    if kind == "json":
        lines = [json.loads(line) for line in written.splitlines() if line.startswith("{")]
        requests = [line for line in lines if line["logger"] == "agentlog.request"]
        fields = {"request_id", "operation", "outcome", "duration_ms", "tenant", "principal"}
        assert requests and all(fields <= set(line) for line in requests)
