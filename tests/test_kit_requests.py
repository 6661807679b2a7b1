"""What the kit client sends, seen through httpx.MockTransport: idempotency keys, retries, principals, and
what an error in a block does when the server is away."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from agentlog_kit import AsyncKit, BadInput, Retry, Unavailable

FAST = Retry(attempts=4, first_delay=0.001, max_delay=0.01)


class Server:
    """Answers each mutation as agentlog would, after the failures it is told to give first."""

    def __init__(self, failures: list[Any] | None = None) -> None:
        self.failures = list(failures or [])
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        if self.failures:
            failure = self.failures.pop(0)
            if isinstance(failure, Exception):
                raise failure
            return failure
        name = body["query"].split("{", 2)[1].split("(")[0].strip()
        answers = {"startTask": {"id": "7c0b2a4e-0000-4000-8000-000000000001"}, "recordLines": {"lastSeq": 3},
                   "endTask": {"id": "7c0b2a4e-0000-4000-8000-000000000001"},
                   "registerAgent": {"name": "Estimator", "purpose": None, "roles": [], "transcriptReaders": [],
                                     "logging": "FULL"}}
        return httpx.Response(200, json={"data": {name: answers[name]}})

    def inputs(self, mutation: str) -> list[dict[str, Any]]:
        return [body["variables"]["input"] for body in self.bodies if f"{mutation}(" in body["query"]]


def kit_on(server: Server) -> AsyncKit:
    return AsyncKit("http://agentlog.test", "kit-token", retry=FAST, transport=httpx.MockTransport(server))


UNAVAILABLE = httpx.Response(200, json={"data": None, "errors": [
    {"message": "The database cannot be reached; try again.", "extensions": {"code": "UNAVAILABLE"}}]})


async def test_every_write_carries_a_key_of_its_own():
    server = Server()
    async with kit_on(server) as kit:
        await kit.register_agent("Estimator")
        async with kit.task("Estimator", "EstimateRepair") as t:
            await t.model_call("Everyday", input_tokens=1, output_tokens=1, cost_micros=1)
    keys = [body["variables"]["input"]["idempotencyKey"] for body in server.bodies]
    assert len(keys) == 4 and len(set(keys)) == 4
    assert [body["query"].split("{", 2)[1].split("(")[0].strip() for body in server.bodies] == [
        "registerAgent", "startTask", "recordLines", "endTask"]


@pytest.mark.parametrize("failure", [
    httpx.Response(503, text="the database is away"),
    UNAVAILABLE,
    httpx.ConnectError("connection refused"),
    httpx.ReadError("connection reset by peer"),
])
async def test_transport_errors_and_unavailable_are_sent_again_with_the_same_key(failure):
    server = Server([failure, failure])
    async with kit_on(server) as kit:
        agent = await kit.register_agent("Estimator")
    assert agent.name == "Estimator"
    assert len(server.bodies) == 3 and server.bodies[0] == server.bodies[1] == server.bodies[2]


async def test_after_the_last_attempt_the_call_raises_unavailable_and_keeps_the_lines():
    server = Server([])
    async with kit_on(server) as kit:
        t = await kit.start_task("Estimator", "EstimateRepair")
        await t.model_call("Everyday", input_tokens=1, output_tokens=1, cost_micros=1)
        server.failures = [httpx.Response(503)] * FAST.attempts
        with pytest.raises(Unavailable) as away:
            await t.flush()
        assert away.value.code == "UNAVAILABLE"
        await t.end()
    batches = server.inputs("recordLines")
    assert len(batches) == FAST.attempts + 1 and all(batch == batches[0] for batch in batches)


async def test_a_refusal_is_raised_at_once_without_a_retry_with_its_status_field_and_request_id():
    refusal = httpx.Response(200, headers={"X-Request-Id": "req-7"}, json={"data": None, "errors": [
        {"message": "agent: 'Nobody' is not registered; call registerAgent first.",
         "extensions": {"code": "BAD_INPUT", "field": "input.agent"}}]})
    server = Server([refusal])
    async with kit_on(server) as kit:
        with pytest.raises(BadInput) as refused:
            await kit.start_task("Nobody", "Anything")
    assert len(server.bodies) == 1
    error = refused.value
    assert (error.code, error.field, error.path, error.http_status, error.request_id) == (
        "BAD_INPUT", "agent", "input.agent", 200, "req-7")


async def test_the_field_comes_from_extensions_never_from_the_message():
    refusal = httpx.Response(200, json={"data": None, "errors": [
        {"message": "agent: 'Nobody' is not registered; call registerAgent first.",
         "extensions": {"code": "BAD_INPUT"}}]})
    server = Server([refusal])
    async with kit_on(server) as kit:
        with pytest.raises(BadInput) as refused:
            await kit.start_task("Nobody", "Anything")
    assert refused.value.field is None and refused.value.path is None


async def test_a_principal_is_an_id_or_an_id_and_a_name():
    server = Server()
    async with kit_on(server) as kit:
        async with kit.task("Estimator", "EstimateRepair", requester={"id": "mia", "name": "Mia"}):
            pass
        async with kit.task("Estimator", "EstimateRepair", actor="estimator-account", requester="mia"):
            pass
    first, second = server.inputs("startTask")
    assert first["requester"] == {"id": "mia", "name": "Mia"} and first["actor"] == {"id": "Estimator"}
    assert second["requester"] == {"id": "mia"} and second["actor"] == {"id": "estimator-account"}


async def test_an_error_in_the_block_is_not_replaced_when_the_server_is_away():
    server = Server()
    async with kit_on(server) as kit:
        with pytest.raises(ValueError, match="no cable in stock") as escaped:
            async with kit.task("Estimator", "EstimateRepair") as t:
                await t.model_call("Everyday", input_tokens=1, output_tokens=1, cost_micros=1)
                server.failures = [httpx.ConnectError("connection refused")] * FAST.attempts
                raise ValueError("no cable in stock")
        assert any(f"task {t.id} could not be ended" in note for note in escaped.value.__notes__)
    assert server.inputs("endTask") == []
    assert len(server.inputs("recordLines")) == FAST.attempts + 1, "closing the kit sends the lines kept"
