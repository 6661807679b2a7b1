"""A query too deep, with too many aliases or too long is refused before any of it runs."""

import httpx
import pytest

from graph.app import create_app
from models.settings import load
from tests.shop import Client, Shop

START = (
    'startTask(input: {agent: "Estimator", skill: "EstimateRepair", actor: {id: "estimator"}, '
    'requester: {id: "mia"}, about: "Ticket T-7"})'
)


def nested_children(levels: int) -> str:
    return "children { " * levels + "id" + " }" * levels


async def tasks_of(shop: Shop) -> list[str]:
    data = await shop.client.ok("{ tasks(first: 500) { edges { node { id } } } }", token=shop.kit)
    return [edge["node"]["id"] for edge in data["tasks"]["edges"]]


async def refused(shop: Shop, query: str) -> dict:
    body = await shop.client.post(query, token=shop.kit)
    assert body.get("data") is None, body
    assert len(body["errors"]) == 1, body
    return body["errors"][0]


async def test_a_query_twenty_levels_deep_is_read(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()

    data = await client.ok(f'{{ task(id: "{task}") {{ id {nested_children(19)} }} }}', token=shop.noor)

    assert data["task"] == {"id": task, "children": []}


async def test_a_query_deeper_than_twenty_levels_is_refused_and_nothing_of_it_runs(client):
    shop = Shop(client)
    await shop.setup()

    error = await refused(shop, f"mutation {{ {START} {{ id {nested_children(20)} }} }}")

    assert error["extensions"]["code"] == "BAD_INPUT"
    assert "maximum operation depth of 20" in error["message"]
    assert await tasks_of(shop) == []


async def test_more_than_fifty_aliases_are_refused_and_nothing_of_them_runs(client):
    shop = Shop(client)
    await shop.setup()
    fifty = " ".join(f"t{i}: {START} {{ id }}" for i in range(50))

    error = await refused(shop, f"mutation {{ {fifty} again: {START} {{ id }} }}")

    assert error["extensions"]["code"] == "BAD_INPUT"
    assert "51 aliases found. Allowed: 50" in error["message"]
    assert await tasks_of(shop) == []


async def test_fifty_aliases_are_answered(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    fifty = " ".join(f't{i}: task(id: "{task}") {{ id }}' for i in range(50))

    data = await client.ok(f"{{ {fifty} }}", token=shop.noor)

    assert data == {f"t{i}": {"id": task} for i in range(50)}


async def test_a_query_longer_than_ten_thousand_tokens_is_refused_and_nothing_of_it_runs(client):
    shop = Shop(client)
    await shop.setup()

    error = await refused(shop, f"mutation {{ {START} {{ {'id ' * 10_000} }} }}")

    assert error["extensions"]["code"] == "BAD_INPUT"
    assert "more than 10000 tokens" in error["message"]
    assert await tasks_of(shop) == []


@pytest.fixture
async def strict(database):
    """A server started with tighter limits than the defaults."""
    app = create_app(load(database_url=database, max_query_depth=3, max_aliases=2, max_tokens=40))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agentlog.test") as http:
        yield Client(http)


async def test_the_limits_are_set_from_the_environment(client, strict):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    tight = Shop(strict, tenant=shop.tenant)

    deep = await strict.post(f'{{ task(id: "{task}") {{ {nested_children(3)} }} }}', token=shop.noor)
    aliased = await strict.post('{ a: me { id } b: me { id } c: me { id } }', token=shop.noor)
    long = await strict.post(f"{{ me {{ {'id ' * 40} }} }}", token=shop.noor)
    within = await strict.ok(f'{{ a: task(id: "{task}") {{ {nested_children(2)} }} }}', token=tight.noor)

    assert "maximum operation depth of 3" in deep["errors"][0]["message"]
    assert "3 aliases found. Allowed: 2" in aliased["errors"][0]["message"]
    assert "more than 40 tokens" in long["errors"][0]["message"]
    assert all(body["errors"][0]["extensions"]["code"] == "BAD_INPUT" for body in (deep, aliased, long))
    assert within == {"a": {"children": []}}
