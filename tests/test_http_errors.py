"""Every answer is JSON with an extensions.code: requests that never reach GraphQL, subscriptions sent over plain
HTTP, and failures nobody expected, which say only a request id."""

import logging

import pytest

import graph.app
import graph.api.schema
from tests.shop import Shop, work

START = 'mutation { startTask(input: {agent: "Estimator", skill: "EstimateRepair", actor: {id: "estimator"}}) { id } }'
SUBSCRIPTION = "subscription { taskEvents { event } }"


def refusal(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"errors"} and len(body["errors"]) == 1, body
    error = body["errors"][0]
    assert error["extensions"]["code"] == code, error
    return error


async def test_a_body_that_is_not_json_is_bad_input(client):
    response = await client.http.post("/graphql", content=b'{"query": ', headers={"Content-Type": "application/json"})

    assert "JSON" in refusal(response, 400, "BAD_INPUT")["message"]


async def test_a_request_without_a_query_is_bad_input(client):
    response = await client.http.post("/graphql", json={"variables": {}})

    assert "No GraphQL query" in refusal(response, 400, "BAD_INPUT")["message"]


@pytest.mark.parametrize("body, said", [
    ({"query": "{ me { id } }", "variables": "mia"}, "variables"),
    ([{"query": "{ me { id } }"}], "Batching"),
])
async def test_a_request_of_the_wrong_shape_is_bad_input(client, body, said):
    response = await client.http.post("/graphql", json=body)

    assert said in refusal(response, 400, "BAD_INPUT")["message"]


async def test_a_body_of_another_type_is_bad_input(client):
    response = await client.http.post("/graphql", content=b"{ me { id } }", headers={"Content-Type": "text/plain"})

    assert "content type" in refusal(response, 400, "BAD_INPUT")["message"]


async def test_a_query_sent_as_get_is_bad_input(client):
    shop = Shop(client)
    response = await client.http.get("/graphql", params={"query": "{ me { id } }"},
                                     headers={"Accept": "application/json", "Authorization": f"Bearer {shop.noor}"})

    assert "GET" in refusal(response, 400, "BAD_INPUT")["message"]


async def test_a_mutation_sent_as_get_is_bad_input_and_writes_nothing(client):
    shop = Shop(client)
    await shop.setup()

    response = await client.http.get("/graphql", params={"query": START},
                                     headers={"Accept": "application/json", "Authorization": f"Bearer {shop.kit}"})

    assert "GET" in refusal(response, 400, "BAD_INPUT")["message"]
    assert not await work(shop.tenant).exists()


async def test_an_operation_name_that_is_not_in_the_document_is_bad_input(client):
    response = await client.http.post("/graphql", json={"query": "query Mine { me { id } }", "operationName": "Theirs"})

    assert "Theirs" in refusal(response, 400, "BAD_INPUT")["message"]


async def test_a_method_graphql_does_not_take_is_refused_as_json(client):
    response = await client.http.put("/graphql", json={"query": "{ me { id } }"})

    refusal(response, 405, "BAD_INPUT")


async def test_an_unknown_path_is_not_found_as_json(client):
    refusal(await client.http.get("/graphq"), 404, "NOT_FOUND")


@pytest.mark.parametrize("accept", [
    "text/event-stream",
    "multipart/mixed;subscriptionSpec=1.0, application/json",
    "application/graphql-response+json, application/json",
])
async def test_a_subscription_sent_over_http_is_bad_input(client, accept):
    shop = Shop(client)
    headers = {"Accept": accept, "Authorization": f"Bearer {shop.noor}"}

    response = await client.http.post("/graphql", json={"query": SUBSCRIPTION}, headers=headers)

    assert "WebSocket" in refusal(response, 400, "BAD_INPUT")["message"]


async def test_a_subscription_sent_as_get_is_bad_input(client):
    response = await client.http.get("/graphql", params={"query": SUBSCRIPTION}, headers={"Accept": "text/event-stream"})

    assert "WebSocket" in refusal(response, 400, "BAD_INPUT")["message"]


async def test_parse_and_validation_errors_say_what_is_wrong(client):
    shop = Shop(client)

    parse = await client.error("{ me { id ", token=shop.noor)
    validation = await client.error("{ me { shoeSize } }", token=shop.noor)

    assert parse["extensions"]["code"] == validation["extensions"]["code"] == "BAD_INPUT"
    assert "Syntax Error" in parse["message"] and "shoeSize" in validation["message"]


async def test_an_unexpected_failure_outside_any_field_is_internal_with_a_request_id(client, monkeypatch, caplog):
    def broken(self):
        raise RuntimeError("password=hunter2 in the connection string")

    monkeypatch.setattr(graph.api.schema.KnownDocuments, "on_parse", broken)
    shop = Shop(client)

    with caplog.at_level(logging.ERROR, logger="agentlog.errors"):
        body = await client.post("{ me { id } }", token=shop.noor)

    error = body["errors"][0]
    assert error["extensions"]["code"] == "INTERNAL" and "path" not in error
    request_id = error["extensions"]["requestId"]
    assert request_id in error["message"] and "hunter2" not in str(body)
    assert any(request_id in record.getMessage() for record in caplog.records)


async def test_an_unexpected_failure_before_graphql_runs_is_internal_json(client, monkeypatch, caplog):
    def broken(header):
        raise RuntimeError("password=hunter2 in the key file")

    monkeypatch.setattr(graph.app, "principal_from_header", broken)

    with caplog.at_level(logging.ERROR, logger="agentlog.errors"):
        response = await client.http.post("/graphql", json={"query": "{ me { id } }"})

    error = refusal(response, 500, "INTERNAL")
    assert error["extensions"]["requestId"] in error["message"] and "hunter2" not in response.text
    assert any(error["extensions"]["requestId"] in record.getMessage() for record in caplog.records)
