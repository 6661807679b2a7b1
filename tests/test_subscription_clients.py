"""Noor follows the workshop's work with the clients frontends use: `graphql-ws` (the reference client Apollo
Client and urql use, run by Node) and Python's `gql`. Both need every graphql-transport-ws message as a JSON text
frame."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from gql import Client as GqlClient
from gql import gql
from gql.transport.websockets import WebsocketsTransport
from websockets.asyncio.client import connect

from tests.servers import Server
from tests.test_subscriptions import shop_on

NODE_CLIENTS = Path(__file__).resolve().parent / "node"
TASK_EVENTS = "subscription { taskEvents { event task { id status } } }"


@pytest.fixture(scope="session")
def graphql_ws() -> Path:
    """tests/node installed from the npm registry into a folder of its own, exactly as its lock file says."""
    folder = Path(tempfile.mkdtemp(prefix="agentlog-node-"))
    for name in ("package.json", "package-lock.json", "subscribe.mjs"):
        shutil.copy(NODE_CLIENTS / name, folder / name)
    subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder, check=True, timeout=300,
        stdout=subprocess.DEVNULL,
    )
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def until_heard(heard: asyncio.Future, shop) -> str:
    """Starts probe tasks until the subscriber has heard one; its id."""
    for _ in range(60):
        probe = (await shop.start())["id"]
        try:
            return await asyncio.wait_for(asyncio.shield(heard), 1)
        except TimeoutError:
            continue
    raise AssertionError(f"the subscriber never heard a task (last started {probe})")


async def test_every_message_is_a_json_text_frame(servers: list[Server]):
    async with shop_on(servers[0]) as shop:
        async with connect(servers[0].ws_url, subprotocols=["graphql-transport-ws"], open_timeout=15) as ws:
            await ws.send(json.dumps({"type": "connection_init", "payload": {"Authorization": f"Bearer {shop.noor}"}}))
            ack = await asyncio.wait_for(ws.recv(), 15)
            await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": TASK_EVENTS}}))
            heard: asyncio.Future = asyncio.ensure_future(asyncio.wait_for(ws.recv(), 60))
            await until_heard(heard, shop)
            event = heard.result()
    assert isinstance(ack, str) and json.loads(ack) == {"type": "connection_ack"}
    assert isinstance(event, str) and json.loads(event)["type"] == "next"


async def test_graphql_ws_from_node_hears_a_task_start(servers: list[Server], graphql_ws: Path):
    async with shop_on(servers[0]) as shop:
        node = await asyncio.create_subprocess_exec(
            "node", "subscribe.mjs", servers[0].ws_url, shop.noor, "1", cwd=graphql_ws,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        try:
            connected = json.loads(await asyncio.wait_for(node.stdout.readline(), 30))
            first: asyncio.Future = asyncio.ensure_future(node.stdout.readline())
            await until_heard(first, shop)
            said = json.loads(first.result())
            assert await asyncio.wait_for(node.wait(), 30) == 0, await node.stderr.read()
        finally:
            if node.returncode is None:
                node.kill()
                await node.wait()
    assert connected == {"connected": True}
    event = said["next"]["data"]["taskEvents"]
    assert event["event"] == "AgentTaskStarted" and event["task"]["status"] == "RUNNING"
    assert "errors" not in said["next"]


async def test_graphql_ws_is_refused_a_bad_token_with_the_reason(servers: list[Server], graphql_ws: Path):
    node = await asyncio.create_subprocess_exec(
        "node", "subscribe.mjs", servers[0].ws_url, "not-a-token", "1", cwd=graphql_ws,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(node.communicate(), 30)
    assert node.returncode == 1
    assert json.loads(out.decode().splitlines()[-1]) == {"closed": 4403, "reason": "Forbidden"}


async def test_python_gql_hears_a_task_start(servers: list[Server]):
    async with shop_on(servers[0]) as shop:
        transport = WebsocketsTransport(
            url=servers[0].ws_url, init_payload={"Authorization": f"Bearer {shop.noor}"},
            subprotocols=[WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL],
        )
        async with GqlClient(transport=transport) as session:
            events = session.subscribe(gql(TASK_EVENTS))
            first: asyncio.Future = asyncio.ensure_future(anext(events))
            heard = await until_heard(first, shop)
            await events.aclose()
    assert heard["taskEvents"]["event"] == "AgentTaskStarted"
    assert heard["taskEvents"]["task"]["status"] == "RUNNING"
