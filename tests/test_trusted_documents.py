"""The workshop's frontend sends only the hashes of its own documents; where only trusted documents run, nobody but
the kit can send any other, and an unknown hash is answered PERSISTED_QUERY_NOT_FOUND."""

from __future__ import annotations

import hashlib
import json

import pytest

from models import settings
from tests.shop import Shop

TASKS = "query Tasks { tasks(first: 10) { edges { node { id agent status } } } }"
ME = "query Me { me { id tenant } }"
OTHER = "{ tasks(first: 10) { edges { node { id about given } } } }"


def sha256(document: str) -> str:
    return hashlib.sha256(document.encode()).hexdigest()


def persisted(document_hash: str, query: str | None = None) -> dict:
    body: dict = {"extensions": {"persistedQuery": {"version": 1, "sha256Hash": document_hash}}}
    if query is not None:
        body["query"] = query
    return body


@pytest.fixture
def trusted(tmp_path, configure):
    path = tmp_path / "trusted-documents.json"
    path.write_text(json.dumps({sha256(TASKS): TASKS, sha256(ME): ME}))
    configure(trusted_documents=str(path))
    return path


async def send(client, body: dict, token: str | None) -> dict:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = await client.http.post("/graphql", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def tasks_seen(client, shop: Shop) -> list[str]:
    return [e["node"]["id"] for e in (await client.ok(TASKS, token=shop.noor))["tasks"]["edges"]]


async def test_a_hash_alone_runs_its_trusted_document(client, trusted):
    shop = Shop(client)
    await shop.setup()
    task = await shop.start()

    answer = await send(client, persisted(sha256(TASKS)), shop.noor)

    assert "errors" not in answer
    assert [e["node"]["id"] for e in answer["data"]["tasks"]["edges"]] == [task["id"]]


async def test_an_unknown_hash_is_not_found(client, trusted):
    shop = Shop(client)
    answer = await send(client, persisted(sha256(OTHER)), shop.noor)
    assert answer["data"] is None
    assert answer["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"


async def test_a_hash_that_is_not_the_documents_own_is_refused(client, trusted):
    shop = Shop(client)
    answer = await send(client, persisted(sha256(TASKS), query=OTHER), shop.noor)
    assert answer["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"


async def test_without_only_trusted_any_document_still_runs(client, trusted):
    shop = Shop(client)
    await shop.setup()
    assert "errors" not in await send(client, {"query": OTHER}, shop.noor)


async def test_only_trusted_documents_run_for_people_and_strangers(client, trusted, configure):
    shop = Shop(client)
    await shop.setup()
    task = await shop.start()
    configure(only_trusted_documents=True)

    for token in (shop.noor, shop.mia, None):
        refused = await send(client, {"query": OTHER}, token)
        assert refused["data"] is None and refused["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    by_text = await send(client, {"query": TASKS}, shop.noor)
    by_hash = await send(client, persisted(sha256(TASKS)), shop.noor)
    assert by_text == by_hash
    assert [e["node"]["id"] for e in by_hash["data"]["tasks"]["edges"]] == [task["id"]]


async def test_an_untrusted_write_by_a_person_writes_nothing_and_the_kit_still_writes(client, trusted, configure):
    shop = Shop(client)
    await shop.setup()
    configure(only_trusted_documents=True)
    start = "mutation($input: StartTaskInput!) { startTask(input: $input) { id } }"
    input = {"agent": "Estimator", "skill": "EstimateRepair", "about": "Ticket T-7", "trigger": "Mia asked.",
             "requester": {"id": "mia", "name": "Mia"}, "actor": {"id": "estimator", "name": "Estimator"}}

    refused = await send(client, {"query": start, "variables": {"input": input}}, shop.noor)
    assert refused["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    assert await tasks_seen(client, shop) == []

    task = await shop.start()
    assert await tasks_seen(client, shop) == [task["id"]]


def test_a_documents_file_whose_hash_is_not_its_documents_stops_the_server(tmp_path, monkeypatch):
    path = tmp_path / "documents.json"
    path.write_text(json.dumps({sha256(ME): TASKS}))
    monkeypatch.setenv("AGENTLOG_TRUSTED_DOCUMENTS", str(path))
    [problem] = settings.problems()
    assert problem.startswith("AGENTLOG_TRUSTED_DOCUMENTS=") and "sha256" in problem
