"""A request body over AGENTLOG_MAX_BODY_BYTES answers 413 before it is parsed, on every route, and writes nothing,
whether its size is declared or it streams without end."""

import asyncio
import itertools
import json

import httpx
import pytest

from graph.app import create_app
from models.settings import load
from tests.shop import Client, Shop, work

LIMIT = 4096
START = "mutation($input: StartTaskInput!) { startTask(input: $input) { id } }"


@pytest.fixture
async def small(database):
    """A server that takes bodies of at most LIMIT bytes."""
    app = create_app(load(database_url=database, max_body_bytes=LIMIT))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agentlog.test") as http:
        yield Client(http)


def start_body(shop: Shop, given: str) -> bytes:
    input = {"agent": "Estimator", "skill": "EstimateRepair", "actor": {"id": "estimator"}, "given": given}
    return json.dumps({"query": START, "variables": {"input": input}}).encode()


def headers(shop: Shop) -> dict[str, str]:
    return {"Authorization": f"Bearer {shop.kit}", "Content-Type": "application/json"}


def too_large(response: httpx.Response) -> None:
    assert response.status_code == 413, response.text
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    assert "AGENTLOG_MAX_BODY_BYTES" in response.json()["errors"][0]["message"]


async def test_a_declared_body_over_the_limit_is_refused_and_nothing_is_written(small):
    shop = Shop(small)
    await shop.setup()
    body = start_body(shop, "x" * LIMIT)

    response = await small.http.post("/graphql", content=body, headers=headers(shop))

    too_large(response)
    assert not await work(shop.tenant).exists()


async def test_a_body_within_the_limit_is_served(small):
    shop = Shop(small)
    await shop.setup()
    body = start_body(shop, "x" * (LIMIT // 2))
    assert len(body) <= LIMIT

    response = await small.http.post("/graphql", content=body, headers=headers(shop))

    assert response.status_code == 200 and response.json()["data"]["startTask"]["id"]


async def chunks_of(body: bytes, size: int = 512):
    for start in range(0, len(body), size):
        yield body[start:start + size]


async def test_a_streamed_body_over_the_limit_is_cut_off_and_nothing_is_written(small):
    shop = Shop(small)
    await shop.setup()

    response = await small.http.post("/graphql", content=chunks_of(start_body(shop, "x" * LIMIT)),
                                     headers=headers(shop))

    assert "content-length" not in response.request.headers
    too_large(response)
    assert not await work(shop.tenant).exists()


async def test_a_body_that_never_ends_is_cut_off_at_the_limit(small):
    sent = 0

    async def endless():
        nonlocal sent
        yield b'{"query": "mutation { registerAgent(input: {name: \\"'
        for _ in itertools.count():
            sent += 1024
            yield b"x" * 1024

    shop = Shop(small)
    response = await asyncio.wait_for(small.http.post("/graphql", content=endless(), headers=headers(shop)), 30)

    too_large(response)
    assert sent <= LIMIT + 2048


@pytest.mark.parametrize("method, path", [
    ("GET", "/healthz"),
    ("GET", "/openapi.json"),
    ("GET", "/agentic/observability/sessions/s-1/transcript"),
    ("POST", "/somewhere-not-yet-served"),
])
async def test_every_route_is_covered(small, method, path):
    response = await small.http.request(method, path, content=b"x" * (LIMIT + 1))

    too_large(response)


async def test_the_default_limit_is_sixteen_mebibytes(client):
    shop = Shop(client)
    declared = {**headers(shop), "Content-Length": str(16 * 1024 * 1024 + 1)}

    over = await client.http.post("/graphql", content=chunks_of(b" " * 1024), headers=declared)

    too_large(over)


async def test_a_real_server_cuts_off_a_chunked_body_that_never_ends(servers):
    """Through uvicorn, with the default limit: chunks keep coming until the server answers 413."""
    server = servers[0]
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"POST /graphql HTTP/1.1\r\nHost: agentlog\r\nContent-Type: application/json\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"x" * 65536
    framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"

    async def send_forever() -> int:
        sent = 0
        try:
            while True:
                writer.write(framed)
                await writer.drain()
                sent += len(chunk)
        except (ConnectionError, OSError):
            return sent

    sending = asyncio.create_task(send_forever())
    try:
        status_line = await asyncio.wait_for(reader.readline(), 60)
    finally:
        sending.cancel()
        writer.close()
    assert status_line.startswith(b"HTTP/1.1 413"), status_line
