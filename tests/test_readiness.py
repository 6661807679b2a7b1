"""/readyz follows the database; a request whose database cannot be reached answers UNAVAILABLE (503 outside
GraphQL) and writes nothing. The real outage, a restarted cluster, is in test_database_outage.py."""

import asyncio

import asyncpg
import pytest
from tortoise.exceptions import DBConnectionError, OperationalError

import graph.http.readiness
import graph.http.rest
import resolvers.write.lines
from models.availability import database_unavailable
from tests.shop import Shop, work_lines

TOOL = "mutation($input: ToolCallInput!) { recordToolCall(input: $input) { seq } }"


class Gone:
    def __init__(self, error: BaseException | None = None, hang: bool = False) -> None:
        self.error, self.hang = error, hang

    async def execute_query(self, *args, **kwargs):
        if self.hang:
            await asyncio.sleep(3600)
        raise self.error


async def test_ready_while_the_database_answers(client):
    response = await client.http.get("/readyz")

    assert response.status_code == 200 and response.json() == {"status": "ready"}


@pytest.mark.parametrize("gone", [Gone(ConnectionRefusedError(111, "Connection refused")), Gone(hang=True)],
                         ids=["refused", "no-answer"])
async def test_not_ready_while_the_database_does_not_answer(client, monkeypatch, gone):
    monkeypatch.setattr(graph.http.readiness, "get_connection", lambda name: gone)
    monkeypatch.setattr(graph.http.readiness, "READY_TIMEOUT_S", 0.2)

    response = await asyncio.wait_for(client.http.get("/readyz"), 5)

    assert response.status_code == 503
    assert response.json()["errors"][0]["extensions"]["code"] == "UNAVAILABLE"
    assert (await client.http.get("/healthz")).status_code == 200


@pytest.mark.parametrize("error", [
    ConnectionRefusedError(111, "Connection refused"),
    DBConnectionError("could not connect"),
    asyncpg.exceptions.AdminShutdownError("terminating connection due to administrator command"),
    asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
    asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
], ids=lambda error: type(error).__name__)
async def test_a_write_whose_database_is_gone_is_unavailable_and_writes_nothing(client, monkeypatch, error):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    before = await work_lines(shop.tenant).count()

    async def cut(*args, **kwargs):
        try:
            raise error
        except Exception as raised:
            raise OperationalError(str(raised)) from raised

    monkeypatch.setattr(resolvers.write.lines, "append_many", cut)
    failed = await client.error(TOOL, {"input": {"task": task, "tool": "PartsFor", "idempotencyKey": "k1"}}, shop.kit)
    monkeypatch.undo()

    assert failed["extensions"]["code"] == "UNAVAILABLE" and "idempotencyKey" in failed["message"]
    assert await work_lines(shop.tenant).count() == before
    retried = await client.ok(TOOL, {"input": {"task": task, "tool": "PartsFor", "idempotencyKey": "k1"}}, shop.kit)
    assert retried["recordToolCall"]["seq"] == before + 1


async def test_rest_answers_503_while_the_database_is_gone(client, monkeypatch):
    shop = Shop(client)

    async def gone(*args, **kwargs):
        raise DBConnectionError("could not connect")

    monkeypatch.setattr(graph.http.rest, "session_transcript", gone)
    response = await client.http.get("/agentic/observability/sessions/s-1/transcript",
                                     headers={"Authorization": f"Bearer {shop.noor}"})

    assert response.status_code == 503
    assert response.json()["errors"][0]["extensions"]["code"] == "UNAVAILABLE"


def test_a_fault_is_not_taken_for_an_outage():
    assert not database_unavailable(ValueError("bad value"))
    assert not database_unavailable(asyncpg.exceptions.UniqueViolationError("duplicate key"))
    assert not database_unavailable(FileNotFoundError(2, "No such file"))
